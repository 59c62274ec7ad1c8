"""Reads for approvals: each a fixed number of queries, whatever the queue or catalog size."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

from approvals.catalog_index import CatalogIndex, GateTool, catalog_index
from approvals.domain import DECIDED_STATES, Earlier, ServedSet, State, identity_key
from approvals.models import TIER_KEYS, AllowedCall, ApprovalRequest
from catalog.core.evidence import SpentApproval
from catalog.core.permissions import has_role
from catalog.core.roles import APPROVER, APPROVER_DOMAIN_PREFIX, SAFETY_OFFICER
from catalog.domain.keys import canonical_key
from catalog.models import CandidateSet, Finding, Team, Waiver

# --- the requested tool ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolMatch:
    tool: GateTool | None
    candidates: list[GateTool] = field(default_factory=list)  # more than one: ambiguous

    @property
    def ambiguous(self) -> bool:
        return self.tool is None and len(self.candidates) > 1


def tool_lookup(
    name: str, *, system: str | None = None, index: CatalogIndex | None = None, clinical: bool = False
) -> ToolMatch:
    """The live tool the runtime means, by any spelling (declared id, LLM name, canonical key, alias).

    An exact declared id wins, then an exact LLM name (what the model was shown), then a canonical-key
    or alias match (the two systems may both fold to one key, as `bookAppointment` and
    `book-appointment` do). Two or more equally good matches resolve to nothing: guessing which tool to
    gate would be the silent failure this gate exists to prevent. Under a clinical profile (`clinical`) an alias
    counts once it is in effect. One query (the catalog's version).
    """
    index = index or catalog_index()
    for found in (
        index.by_declared_id.get(name, []),
        index.by_llm_name.get(name, []),
        (index.by_key_in_effect if clinical else index.by_key).get(canonical_key(name), []),
    ):
        if system:
            found = [t for t in found if t.system == system]
        if len(found) == 1:
            return ToolMatch(found[0], found)
        if len(found) > 1:
            return ToolMatch(None, found)
    return ToolMatch(None, [])


# --- what the run was offered, and what it called before ----------------------------------------------


def candidate_set_get(set_id: str, *, now: datetime) -> ServedSet | None:
    """The candidate set the resolve API served under this id, while it is kept (CONDOR_USAGE_CANDIDATE_SET_HOURS
    after it was last served, whether or not the beat has pruned it yet); None otherwise. One query."""
    kept_since = now - timedelta(hours=settings.CONDOR_USAGE_CANDIDATE_SET_HOURS)
    row = (
        CandidateSet.objects.filter(set_id=set_id, last_served_at__gte=kept_since)
        .values_list("system", "profile", "tool_keys")
        .first()
    )
    if row is None:
        return None
    system, profile, keys = row
    return ServedSet(set_id, system, profile, frozenset(k for k in keys or () if isinstance(k, str)))


def earlier_calls(
    *, tool_pk: int, patient_ref: str, args_sha256: str, since: datetime, now: datetime
) -> tuple[list[Earlier], list[Earlier]]:
    """The newest requests (pending and still decidable, or decided) and allowed calls with this tool, patient and
    canonical arguments since `since`, any idempotency key: two queries, two rows each at most (one key can
    appear once in each, so two always include the newest under another key; `newest_earlier` chooses)."""
    same = Q(tool_id=tool_pk, patient_ref=patient_ref, created_at__gte=since)
    live = Q(state=State.PENDING.value, expires_at__gt=now) | Q(state__in=sorted(s.value for s in DECIDED_STATES))
    requests = (
        ApprovalRequest.objects.filter(same & live, proposed_sha256=args_sha256)
        .order_by("-created_at")
        .values_list("pk", "idempotency_key", "created_at")[:2]
    )
    allowed = (
        AllowedCall.objects.filter(same, args_sha256=args_sha256)
        .order_by("-created_at")
        .values_list("idempotency_key", "created_at")[:2]
    )
    return (
        [Earlier(key, at, str(pk)) for pk, key, at in requests],
        [Earlier(key, at) for key, at in allowed],
    )


def spent_approvals(tool_call_ids: Collection[str], request_ids: Collection[str]) -> list[SpentApproval]:
    """The consumed requests whose tool call id is one of `tool_call_ids` or whose id is one of `request_ids`
    (the telemetry ingest's question, catalog.core.evidence): one query. A request id that is no UUID matches
    nothing; a matched id is answered in the spelling it was asked in (the ingest compares the strings)."""
    asked: dict[uuid.UUID, list[str]] = {}
    for value in request_ids:
        pk = parse_request_id(value) if isinstance(value, str) and len(value) <= 64 else None
        if pk is not None:
            asked.setdefault(pk, []).append(value)
    calls = sorted({c for c in tool_call_ids if c})
    if not asked and not calls:
        return []
    rows = (
        ApprovalRequest.objects.filter(state=State.CONSUMED.value)
        .filter(Q(tool_call_id__in=calls) | Q(pk__in=list(asked)))
        .values_list("pk", "tool_call_id", "tool_id")
    )
    return [
        SpentApproval(request_id=spelling, tool_call_id=call, tool_pk=tool_pk)
        for pk, call, tool_pk in rows
        for spelling in asked.get(pk) or [str(pk)]
    ]


# --- requests --------------------------------------------------------------------------------------


def parse_request_id(value: str | uuid.UUID) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        return None


def request_get(request_id: str | uuid.UUID, *, detail: bool = False) -> ApprovalRequest | None:
    """One request with its tool and approver: one query (every poll, decide and consume reads a request so).
    `detail`: with the tool's owner team and the revision in effect too, for the request page (still one)."""
    pk = parse_request_id(request_id)
    if pk is None:
        return None
    related = ("tool", "decided_by") + (("tool__owner", "tool__in_effect_revision") if detail else ())
    return ApprovalRequest.objects.select_related(*related).filter(pk=pk).first()


def request_state(request_id: uuid.UUID) -> tuple[str, datetime] | None:
    """The cheapest read a long-poll makes: state and expiry by primary key."""
    return ApprovalRequest.objects.filter(pk=request_id).values_list("state", "expires_at").first()


# --- who may decide what ---------------------------------------------------------------------------


def user_groups(user: Any) -> set[str]:
    """The user's group names, read once per request (shared with catalog.core.permissions' cache)."""
    if not getattr(user, "is_authenticated", False):
        return set()
    has_role(user, APPROVER)  # reads the groups once and caches them on the user for this request
    cached = getattr(user, "_condor_groups", None)
    return set(cached) if cached is not None else set(user.groups.values_list("name", flat=True))


def approver_domains(user: Any) -> set[str]:
    """The policy domains the user may approve: one per `approver:<domain>` group. `approver` alone: none."""
    return {g[len(APPROVER_DOMAIN_PREFIX) :] for g in user_groups(user) if g.startswith(APPROVER_DOMAIN_PREFIX)}


def decidable_filter(user: Any) -> Q | None:
    """Requests this user may decide: their domains, plus requests escalated to a group they are in."""
    groups = user_groups(user)
    domains = approver_domains(user)
    if not domains and not groups:
        return None
    q = Q(policy_domain__in=sorted(domains)) if domains else Q(pk__in=[])
    return q | Q(escalated_to__in=sorted(groups)) if groups else q


def may_decide(user: Any, request: ApprovalRequest) -> bool:
    groups = user_groups(user)
    return APPROVER_DOMAIN_PREFIX + request.policy_domain in groups or (
        bool(request.escalated_to) and request.escalated_to in groups
    )


def may_decide_some(user: Any) -> bool:
    """Whether the person approves at all (a domain group, or the escalation group): the bulk form is theirs."""
    return bool(approver_domains(user)) or settings.APPROVALS_ESCALATION_GROUP in user_groups(user)


def may_read_all(user: Any) -> bool:
    """Safety officers and superusers may read every request of every domain (deciding still needs the domain)."""
    return bool(getattr(user, "is_superuser", False)) or SAFETY_OFFICER in user_groups(user)


def may_view(user: Any, request: ApprovalRequest) -> bool:
    """Deciders see their requests; safety officers and superusers see every request (read only)."""
    return may_decide(user, request) or may_read_all(user)


def is_own_request(user: Any, request: ApprovalRequest) -> bool:
    """Four-eyes: requestedBy names the person who asked, by username or e-mail, in any spelling that could be
    them (`identity_key`: case, look-alike letters, invisible characters, `user:` and `@domain` decorations)."""
    mine = {identity_key(user.get_username()), identity_key(getattr(user, "email", "") or "")} - {""}
    return identity_key(request.requested_by) in mine


# --- the queue ---------------------------------------------------------------------------------------


def queue_for(user: Any, *, now: datetime | None = None, limit: int = 200) -> list[ApprovalRequest]:
    """Pending requests the user may decide, soonest to expire first: one query (plus the groups read)."""
    scope = decidable_filter(user)
    if scope is None:
        return []
    qs = ApprovalRequest.objects.pending(now).filter(scope).select_related("tool").order_by("expires_at", "pk")
    return list(qs[:limit])


def pending_all(*, now: datetime | None = None, limit: int = 200) -> list[ApprovalRequest]:
    """Every pending request of every domain, soonest to expire first (for those who may read all): one query."""
    qs = ApprovalRequest.objects.pending(now).select_related("tool").order_by("expires_at", "pk")
    return list(qs[:limit])


def pending_count_all(*, now: datetime | None = None) -> int:
    return ApprovalRequest.objects.pending(now).count()


def patient_pending(
    user: Any, req: ApprovalRequest, *, now: datetime | None = None, limit: int = 20
) -> list[ApprovalRequest]:
    """The same patient's other pending requests this user may open (an approver weighs a call against the
    others; a request of a domain they may not see stays unseen): one query."""
    if not req.patient_ref:
        return []
    qs = ApprovalRequest.objects.pending(now).filter(patient_ref=req.patient_ref).exclude(pk=req.pk)
    if not may_read_all(user):
        scope = decidable_filter(user)
        if scope is None:
            return []
        qs = qs.filter(scope)
    return list(qs.order_by("expires_at", "pk")[:limit])


def tier_counts(user: Any, *, now: datetime | None = None) -> dict[str, int]:
    """Pending requests the user may decide, per tier (high, low, ungated): one query."""
    counts = dict.fromkeys(TIER_KEYS, 0)
    scope = decidable_filter(user)
    if scope is None:
        return counts
    for row in ApprovalRequest.objects.pending(now).filter(scope).values("tier_key").annotate(n=Count("pk")):
        counts[row["tier_key"]] = row["n"]
    return counts


# --- history -----------------------------------------------------------------------------------------


def history_list(
    user: Any,
    *,
    state: str | None = None,
    tool: str | None = None,
    domain: str | None = None,
    tier: str | None = None,
    decided_by: str | None = None,
    patient_ref: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[ApprovalRequest]:
    """Requests no longer pending, newest decision first, with `latency` (decision minus suspension)."""
    qs = ApprovalRequest.objects.exclude(state=State.PENDING.value)
    if SAFETY_OFFICER not in user_groups(user):
        scope = decidable_filter(user)
        qs = qs.filter(scope) if scope is not None else qs.none()
    if state:
        qs = qs.filter(state=state)
    if tool:
        qs = qs.filter(Q(tool_declared_id__icontains=tool) | Q(tool__canonical_key=canonical_key(tool)))
    if domain:
        qs = qs.filter(policy_domain=domain)
    if tier:
        qs = qs.filter(tier_key=tier)
    if decided_by:
        qs = qs.filter(decided_by__username=decided_by)
    if patient_ref:
        qs = qs.filter(patient_ref=patient_ref)
    if since:
        qs = qs.filter(created_at__gte=since)
    if until:
        qs = qs.filter(created_at__lt=until)
    return (
        qs.select_related("decided_by")
        .annotate(decision_latency=F("decided_at") - F("created_at"))
        .order_by(F("decided_at").desc(nulls_last=True), "-created_at")
    )


# --- the request page's context (issue 23, item 7) -----------------------------------------------------------------
# What an approver weighs beside the call itself: what the tool is for, who owns it and who is on call, its open
# findings, whether its declaration in effect is signed off, and the patient's other pending requests.

USE_WHEN = "USE WHEN:"


def use_when_of(rag_description: str, description: str) -> str:
    """The tool's USE WHEN line (the seeds' ragDescription starts with it); else its description's first line."""
    for line in (rag_description or "").splitlines():
        if line.strip().upper().startswith(USE_WHEN):
            return line.strip()[len(USE_WHEN) :].strip()
    for text in (rag_description, description):
        first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
        if first:
            return first
    return ""


@dataclass(frozen=True)
class SignoffState:
    """`signed-off` (what is served is the newest declaration), `awaiting` (a newer declaration waits) or
    `never` (no declaration of this tool was signed off: clinical profiles are not served it)."""

    state: str
    revision: int | None = None


@dataclass
class RequestContext:
    use_when: str
    team: Team | None
    findings: dict[str, int] = field(default_factory=dict)  # severity → open findings
    signoff: SignoffState | None = None
    others: list[ApprovalRequest] = field(default_factory=list)

    @property
    def findings_total(self) -> int:
        return sum(self.findings.values())


def open_findings(tool_pk: int, *, now: datetime | None = None) -> dict[str, int]:
    """The tool's findings without an active waiver, per severity: one query."""
    waived = Waiver.objects.active(now).filter(tool=OuterRef("tool"), rule=OuterRef("rule"))
    rows = (
        Finding.objects.filter(tool_id=tool_pk)
        .exclude(Exists(waived))
        .values("severity")
        .annotate(n=Count("pk"))
        .order_by("severity")
    )
    return {row["severity"]: row["n"] for row in rows}


def signoff_of(tool: Any) -> SignoffState:
    """From fields the request page has already loaded (no query): catalog.selectors.signoff's reading."""
    revision = tool.in_effect_revision.number if tool.in_effect_revision_id else None
    if tool.in_effect is None:
        return SignoffState("never")
    return SignoffState("awaiting" if tool.awaiting_signoff else "signed-off", revision)


def request_context(user: Any, req: ApprovalRequest, *, now: datetime | None = None) -> RequestContext:
    """Two queries beyond the request (loaded with `request_get(..., detail=True)`): findings, the patient's others."""
    tool = req.tool
    return RequestContext(
        use_when=use_when_of(tool.rag_description, tool.description),
        team=tool.owner,
        findings=open_findings(tool.pk, now=now),
        signoff=signoff_of(tool),
        others=patient_pending(user, req, now=now),
    )
