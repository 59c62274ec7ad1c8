"""Writes for approvals. Every transition is one conditional UPDATE (exactly one writer wins, on SQLite
and on PostgreSQL alike) plus its audit event in the same transaction; notifications leave after commit.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from catalog.domain.keys import canonical_key
from catalog.domain.profiles import is_plan_eligible
from catalog.models import Tool
from catalog.services.audit import Actor, audit_record

from .catalog_index import ToolSnapshot, catalog_index
from .domain import (
    UNGATED,
    ArgsError,
    Decision,
    State,
    args_sha256,
    canonical_args,
    consume_refusal,
    effective_state,
    request_ttl,
    suspend_policy,
)
from .models import ApprovalRequest
from .schema import schema_errors
from .selectors import is_own_request, may_decide, tool_resolve

log = logging.getLogger(__name__)

OBJECT_TYPE = "approvals.request"


class ApprovalRefused(Exception):
    """A refused approvals action. `message` is for the person or runtime that tried it; `code` is stable
    for programs to branch on; `status` is the HTTP status the API answers with."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int = 409,
        errors: list[str] | None = None,
        request: ApprovalRequest | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.errors = errors or []
        self.request = request

    @property
    def forbidden(self) -> bool:
        return self.status == 403


def tool_domain(tool: ToolSnapshot | Tool) -> str:
    """The approval domain: the declared policy domain; TUCAN tools declare none, so their category."""
    return tool.policy_domain or tool.category or tool.module


def _snapshot(req: ApprovalRequest) -> dict[str, Any]:
    return {
        "state": req.state,
        "tool": f"{req.tool_system}:{req.tool_declared_id}",
        "tier": req.tier_key,
        "domain": req.policy_domain,
    }


def _decided_message(req: ApprovalRequest, now: datetime) -> tuple[str, str]:
    """What a second approver (or a late runtime) is told about a request that is no longer pending."""
    state = effective_state(req.state, req.expires_at, now)
    who = req.decided_by.get_username() if req.decided_by_id else "?"
    when = timezone.localtime(req.decided_at).strftime("%Y-%m-%d %H:%M:%S") if req.decided_at else ""
    if state in (State.APPROVED, State.CONSUMED):
        return "already-decided", f"already approved by {who} at {when}"
    if state == State.REJECTED:
        return "already-decided", f"already rejected by {who} at {when}: {req.decision_reason}"
    if state == State.EXPIRED:
        return "expired", f"expired at {timezone.localtime(req.expires_at):%Y-%m-%d %H:%M:%S} without a decision"
    if state == State.CANCELLED:
        return "cancelled", "cancelled by the runtime" + (f": {req.cancel_reason}" if req.cancel_reason else "")
    return "not-pending", f"the request is {state}"


# --- evaluate (the runtime's question) -------------------------------------------------------------


@dataclass
class Evaluation:
    decision: str
    reason: str
    message: str
    tool: ToolSnapshot | Tool | None = None
    request: ApprovalRequest | None = None
    created: bool = False
    candidates: list[str] = field(default_factory=list)


def _replay(existing: ApprovalRequest, *, tool_name: str, sha: str, key: str) -> Evaluation:
    """The same idempotency key again: the same request, or a 409 if it now means a different call."""
    same_tool = canonical_key(tool_name) in {
        canonical_key(existing.requested_name),
        canonical_key(existing.tool_declared_id),
    }
    if not same_tool or sha != existing.proposed_sha256:
        what = "tool" if not same_tool else "arguments"
        raise ApprovalRefused(
            f"idempotencyKey {key!r} was already used for {existing.tool_declared_id} with arguments sha256 "
            f"{existing.proposed_sha256}; this call has a different {what} "
            f"({tool_name}, sha256 {sha}): a new call needs a new idempotency key",
            code="idempotency-key-reused",
            status=409,
            request=existing,
        )
    return Evaluation(Decision.SUSPEND.value, existing.policy_reason, "replayed", existing.tool, existing, False)


def approval_evaluate(
    *,
    tool_name: str,
    profile: str,
    dispatch_mode: str,
    run_id: str,
    requested_by: str,
    patient_ref: str,
    args: dict[str, Any],
    idempotency_key: str,
    via: str,
    ttl_seconds: int | None = None,
    system: str | None = None,
    now: datetime | None = None,
) -> Evaluation:
    """May this call run now? Allow, suspend (one request per idempotency key, however many submits
    race) or refuse. Raises ApprovalRefused for requests the runtime must fix (status 409/422).

    The idempotency key is enforced by the unique index: a suspending call inserts optimistically and a
    duplicate key turns into a replay. Calls that would not insert (allow, refuse, invalid) look the key up,
    so a retry still gets its request back after the catalog changed under it.
    """
    now = now or timezone.now()
    try:
        canonical = canonical_args(args)
    except ArgsError as exc:
        raise ApprovalRefused(str(exc), code="invalid-args", status=422) from exc
    limit = settings.APPROVALS_MAX_ARGS_BYTES
    if len(canonical.encode("utf-8")) > limit:
        raise ApprovalRefused(
            f"args: {len(canonical.encode())} bytes canonical; the limit is {limit}", code="args-too-large", status=422
        )
    sha = hashlib.sha256(canonical.encode("utf-8")).hexdigest()  # = args_sha256(args), without a second pass

    def replay_or(result: Evaluation) -> Evaluation:
        if ApprovalRequest.objects.filter(idempotency_key=idempotency_key).exists():
            return _replay(_by_key(idempotency_key), tool_name=tool_name, sha=sha, key=idempotency_key)
        return result

    try:
        gate = _gate(tool_name=tool_name, system=system, profile=profile, dispatch_mode=dispatch_mode, args=args)
        if isinstance(gate, Evaluation):  # allow or refuse: nothing to insert
            return replay_or(gate)
        tool, outcome = gate
        tier_key = outcome.tier_key or UNGATED
        try:
            ttl = request_ttl(
                tier_key=tier_key,
                requested=ttl_seconds,
                defaults=settings.APPROVALS_TTL_SECONDS,
                minimum=settings.APPROVALS_TTL_MIN_SECONDS,
                maxima=settings.APPROVALS_TTL_MAX_SECONDS,
            )
        except ValueError as exc:
            raise ApprovalRefused(str(exc), code="invalid-ttl", status=422) from exc
    except ApprovalRefused as refusal:
        replayed = replay_or(Evaluation(Decision.REFUSE.value, refusal.code, refusal.message))
        if replayed.request is not None:
            return replayed
        raise
    req = ApprovalRequest(
        idempotency_key=idempotency_key,
        submitted_via=via,
        tool_id=tool.pk,
        tool_system=tool.system,
        tool_declared_id=tool.declared_id,
        requested_name=tool_name,
        profile=profile,
        dispatch_mode=dispatch_mode,
        run_id=run_id,
        requested_by=requested_by,
        patient_ref=patient_ref,
        proposed_args=args_from(canonical),
        proposed_sha256=sha,
        policy_domain=tool_domain(tool),
        hitl_tier=tool.hitl_tier,
        tier_key=tier_key,
        flagged=outcome.flagged,
        policy_reason=outcome.reason,
        created_at=now,
        expires_at=now + timedelta(seconds=ttl),
    )
    try:
        with transaction.atomic():
            req.save(force_insert=True)
            audit_record(
                actor=Actor.for_token(via),
                action="approvals.request.suspended",
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                after={
                    **_snapshot(req),
                    "flagged": req.flagged,
                    "dispatch_mode": dispatch_mode,
                    "requested_by": requested_by,
                    "patient_ref": patient_ref,
                    "args_sha256": sha,
                    "expires_at": req.expires_at,
                    "idempotency_key": idempotency_key,
                },
            )
            transaction.on_commit(_notify_soon)
    except IntegrityError:
        # This key was used before (a retry), or another submit with it committed first: its request answers.
        return _replay(_by_key(idempotency_key), tool_name=tool_name, sha=sha, key=idempotency_key)
    return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool, req, True)


def _gate(
    *, tool_name: str, system: str | None, profile: str, dispatch_mode: str, args: dict[str, Any]
) -> Evaluation | tuple[ToolSnapshot, Any]:
    """The suspend policy applied to the catalog: an Evaluation to answer with (allow, refuse), or the tool
    and the policy outcome of a call that suspends. Raises ApprovalRefused for arguments the schema refuses."""
    index = catalog_index()
    resolution = tool_resolve(tool_name, system=system, index=index)
    if resolution.ambiguous:
        names = [f"{t.system}:{t.declared_id}" for t in resolution.candidates]
        return Evaluation(
            Decision.REFUSE.value,
            "ambiguous-tool",
            f"tool {tool_name!r} matches {len(names)} live tools ({', '.join(names)}); "
            "send the exact declared id, or `system` to choose",
            candidates=names,
        )
    tool = resolution.tool
    profile_row = index.profiles.get(profile)
    if profile_row is None:
        known = ", ".join(sorted(index.profiles)) or "none"
        return Evaluation(
            Decision.REFUSE.value,
            "unknown-profile",
            f"profile {profile!r} is not a catalog profile (known: {known})",
            tool=tool,
        )
    label = f"{tool.system}:{tool.declared_id}" if tool else repr(tool_name)
    outcome = suspend_policy(
        known=tool is not None,
        plan_eligible=tool is not None
        and is_plan_eligible(
            plane=tool.plane,
            availability=tool.availability,
            declared_id=tool.declared_id,
            profile_availabilities=profile_row.availabilities,
            profile_includes=profile_row.includes,
        ),
        effective_policy_class=tool.effective_policy_class if tool else None,
        is_mutating=tool.is_mutating if tool else False,
        hitl_tier=tool.hitl_tier if tool else None,
        dispatch_mode=dispatch_mode,
        tool=label,
        profile=profile,
    )
    if outcome.decision == Decision.REFUSE:
        return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)
    assert tool is not None
    problems = schema_errors(args, tool.input_schema)
    if problems:
        raise ApprovalRefused(
            f"args do not match the input schema of {label}: {len(problems)} problem(s)",
            code="invalid-args",
            status=422,
            errors=problems,
        )
    if outcome.decision == Decision.ALLOW:
        return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)
    return tool, outcome


def _by_key(idempotency_key: str) -> ApprovalRequest:
    return ApprovalRequest.objects.select_related("tool", "decided_by").get(idempotency_key=idempotency_key)


def args_from(canonical: str) -> dict[str, Any]:
    """Stored arguments are the canonical text read back (sorted keys, 2.0 stored as 2)."""
    return json.loads(canonical)


def _enqueue(task_name: str, *args: Any) -> None:
    """Start a notification task after commit. A broker hiccup must never fail the runtime's call,
    whose row is already committed: log it instead."""
    from . import tasks

    try:
        getattr(tasks, task_name).delay(*args)
    except Exception:  # any broker failure: the request itself stands
        log.exception("could not enqueue %s for approval request %s", task_name, args)


def _notify_soon() -> None:
    """New requests are announced in batches by the beat task `notify_new` (every few seconds: one mail per
    domain, not one per request, and no broker round trip on the runtime's call). With no broker there is
    no beat either, so the batch runs right here, after commit."""
    if current_app.conf.task_always_eager:
        _enqueue("notify_new")


# --- decide (the approver's act) -------------------------------------------------------------------


def _load(request_id: Any) -> ApprovalRequest:
    req = ApprovalRequest.objects.select_related("tool", "decided_by").filter(pk=request_id).first()
    if req is None:
        raise ApprovalRefused(f"no approval request {request_id}", code="not-found", status=404)
    return req


def approval_decide(
    *,
    request_id: Any,
    approver: Any,
    decision: str,
    reason: str = "",
    approved_args: dict[str, Any] | None = None,
    bulk: bool = False,
    now: datetime | None = None,
) -> ApprovalRequest:
    """Approve (optionally with edited arguments) or reject one request, exactly once.

    A second approver, or a decision after expiry, gets ApprovalRefused with code `already-decided` /
    `expired` and the message "already approved by X at T": it is an answer, not an error.
    """
    now = now or timezone.now()
    req = _load(request_id)
    if not may_decide(approver, req):
        raise ApprovalRefused(
            f"you may not decide requests of domain {req.policy_domain}: that needs the group "
            f"approver:{req.policy_domain}",
            code="forbidden",
            status=403,
        )
    if is_own_request(approver, req):
        raise ApprovalRefused(
            "you asked for this call (requestedBy); another approver must decide it (four-eyes)",
            code="own-request",
            status=403,
        )
    if decision not in ("approve", "reject"):
        raise ApprovalRefused("decision must be approve or reject", code="invalid-decision", status=422)
    reason = (reason or "").strip()
    if decision == "reject" and not reason:
        raise ApprovalRefused(
            "reason: say why you reject this call (the runtime shows it)", code="reason-required", status=422
        )
    if bulk and req.tier_key != "low":
        raise ApprovalRefused(
            f"{req.tool_declared_id} is tier {req.tier_key}: no bulk approval; open it and decide it on its own",
            code="no-bulk-for-tier",
            status=422,
        )
    if effective_state(req.state, req.expires_at, now) != State.PENDING:
        code, message = _decided_message(req, now)
        raise ApprovalRefused(message, code=code, status=409, request=req)

    fields: dict[str, Any] = {"decided_at": now, "decided_by": approver, "decision_reason": reason}
    if decision == "approve":
        final_args = req.proposed_args
        edited = False
        if approved_args is not None:
            try:
                edited_sha = args_sha256(approved_args)
            except ArgsError as exc:
                raise ApprovalRefused(str(exc), code="invalid-args", status=422) from exc
            if edited_sha != req.proposed_sha256:
                if not req.tool.input_schema:
                    raise ApprovalRefused(
                        f"{req.tool_declared_id} has no input schema, so its arguments cannot be edited here; "
                        "approve them as proposed or reject with a reason",
                        code="no-schema",
                        status=422,
                    )
                problems = schema_errors(approved_args, req.tool.input_schema)
                if problems:
                    raise ApprovalRefused(
                        f"the edited arguments do not match the input schema of {req.tool_declared_id}",
                        code="invalid-args",
                        status=422,
                        errors=problems,
                    )
                final_args, edited = args_from(canonical_args(approved_args)), True
        fields.update(
            state=State.APPROVED.value,
            approved_args=final_args,
            approved_sha256=args_sha256(final_args),
            args_edited=edited,
            consumable_until=now + timedelta(seconds=settings.APPROVALS_CONSUME_WINDOW_SECONDS),
        )
    else:
        fields.update(state=State.REJECTED.value)

    with transaction.atomic():
        won = ApprovalRequest.objects.filter(pk=req.pk, state=State.PENDING.value, expires_at__gt=now).update(**fields)
        if won:
            after = {k: v for k, v in fields.items() if k not in ("decided_by", "approved_args")}
            after["decided_by"] = approver.get_username()
            if fields.get("args_edited"):
                after.update(proposed_sha256=req.proposed_sha256, approved_args=fields["approved_args"])
            audit_record(
                actor=Actor.for_user(approver),
                action=f"approvals.request.{fields['state']}",
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                before=_snapshot(req),
                after=after,
            )
    current = _load(req.pk)
    if not won:
        code, message = _decided_message(current, now)
        raise ApprovalRefused(message, code=code, status=409, request=current)
    return current


# --- consume and cancel (the runtime's acts) -------------------------------------------------------


def approval_consume(*, request_id: Any, args_sha256: str, via: str, now: datetime | None = None) -> ApprovalRequest:
    """Spend an approval: once, and only for the arguments approved. Everything else is refused."""
    now = now or timezone.now()
    req = _load(request_id)

    def refusal(r: ApprovalRequest) -> ApprovalRefused | None:
        found = consume_refusal(
            state=r.state,
            expires_at=r.expires_at,
            consumable_until=r.consumable_until,
            approved_sha256=r.approved_sha256,
            presented_sha256=args_sha256,
            now=now,
        )
        return ApprovalRefused(found[1], code=found[0], status=409, request=r) if found else None

    refused = refusal(req)
    if refused:
        raise refused
    with transaction.atomic():
        won = ApprovalRequest.objects.filter(
            pk=req.pk, state=State.APPROVED.value, approved_sha256=args_sha256, consumable_until__gt=now
        ).update(state=State.CONSUMED.value, consumed_at=now)
        if won:
            audit_record(
                actor=Actor.for_token(via),
                action="approvals.request.consumed",
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                before=_snapshot(req),
                after={"state": State.CONSUMED.value, "args_sha256": args_sha256, "consumed_at": now},
            )
    current = _load(req.pk)
    if not won:
        raise refusal(current) or ApprovalRefused("the approval was consumed concurrently", code="already-consumed")
    return current


def approval_cancel(
    *, request_id: Any, reason: str, via: str, now: datetime | None = None
) -> tuple[ApprovalRequest, bool]:
    """Withdraw a request (pending, or approved and not yet consumed). Returns (request, already_cancelled):
    cancelling twice is an answer, so a retried cancel is safe."""
    now = now or timezone.now()
    req = _load(request_id)
    if req.state == State.CANCELLED:
        return req, True
    reason = (reason or "").strip()
    with transaction.atomic():
        won = (
            ApprovalRequest.objects.filter(pk=req.pk)
            # A pending request past due is expired, not cancellable; an approved one may still be withdrawn.
            .filter(Q(state=State.PENDING.value, expires_at__gt=now) | Q(state=State.APPROVED.value))
            .update(state=State.CANCELLED.value, cancelled_at=now, cancel_reason=reason)
        )
        if won:
            audit_record(
                actor=Actor.for_token(via),
                action="approvals.request.cancelled",
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                before=_snapshot(req),
                after={"state": State.CANCELLED.value, "reason": reason},
            )
    current = _load(req.pk)
    if not won:
        if current.state == State.CANCELLED:
            return current, True
        code, message = _decided_message(current, now)
        if current.state == State.CONSUMED:
            code, message = "already-consumed", "the approval was already consumed: the call ran; nothing to cancel"
        raise ApprovalRefused(f"cannot cancel: {message}", code=code, status=409, request=current)
    return current, False


# --- notification, expiry and escalation (the beat's acts) ----------------------------------------


def approvals_notify_new(*, now: datetime | None = None, limit: int = 500) -> int:
    """Tell each domain's approvers about the requests suspended since the last run: one mail and one
    webhook post per domain. Each request is claimed once (notified_at), so two runs never both send it."""
    from . import notify

    now = now or timezone.now()
    with transaction.atomic():
        due = ApprovalRequest.objects.filter(state=State.PENDING.value, notified_at__isnull=True).order_by("created_at")
        if connection.features.has_select_for_update_skip_locked:
            due = due.select_for_update(skip_locked=True)
        ids = list(due.values_list("pk", flat=True)[:limit])
        ApprovalRequest.objects.filter(pk__in=ids).update(notified_at=now)
    fresh = ApprovalRequest.objects.pending(now).filter(pk__in=ids).order_by("policy_domain", "expires_at")
    by_domain: dict[str, list[ApprovalRequest]] = {}
    for req in fresh:
        by_domain.setdefault(req.policy_domain, []).append(req)
    for domain, requests in by_domain.items():
        notify.notify_suspended(domain, requests)
    return sum(len(r) for r in by_domain.values())


# --- expiry and escalation -------------------------------------------------------------------------

SYSTEM_EXPIRY = Actor(label="system:approvals-expiry")
SYSTEM_ESCALATION = Actor(label="system:approvals-escalation")


def approvals_expire_overdue(*, now: datetime | None = None, batch: int = 500) -> int:
    """Mark pending requests past their expiry as expired, each with its audit event. Safe to run twice
    at once (and against a racing approver): each row changes only while it is still pending."""
    now = now or timezone.now()
    total = 0
    while True:
        with transaction.atomic():
            ids = list(ApprovalRequest.objects.overdue(now).order_by("expires_at").values_list("pk", flat=True)[:batch])
            done = 0
            for pk in ids:
                if ApprovalRequest.objects.filter(pk=pk, state=State.PENDING.value, expires_at__lte=now).update(
                    state=State.EXPIRED.value, expired_at=now
                ):
                    audit_record(
                        actor=SYSTEM_EXPIRY,
                        action="approvals.request.expired",
                        object_type=OBJECT_TYPE,
                        object_id=pk,
                        before={"state": State.PENDING.value},
                        after={"state": State.EXPIRED.value, "expired_at": now},
                    )
                    done += 1
        total += done
        if len(ids) < batch:
            return total


def approvals_escalate_overdue(*, now: datetime | None = None) -> int:
    """Requests pending longer than APPROVALS_ESCALATE_AFTER_SECONDS escalate to the escalation group,
    which is told and may then decide them too. Each request escalates once."""
    now = now or timezone.now()
    group = settings.APPROVALS_ESCALATION_GROUP
    cutoff = now - timedelta(seconds=settings.APPROVALS_ESCALATE_AFTER_SECONDS)
    ids = list(
        ApprovalRequest.objects.pending(now)
        .filter(created_at__lte=cutoff, escalated_at__isnull=True)
        .values_list("pk", flat=True)[:500]
    )
    done = 0
    for pk in ids:
        with transaction.atomic():
            if ApprovalRequest.objects.filter(pk=pk, state=State.PENDING.value, escalated_at__isnull=True).update(
                escalated_at=now, escalated_to=group
            ):
                audit_record(
                    actor=SYSTEM_ESCALATION,
                    action="approvals.request.escalated",
                    object_type=OBJECT_TYPE,
                    object_id=pk,
                    after={"escalated_to": group, "escalated_at": now},
                )
                transaction.on_commit(lambda pk=pk: _enqueue("notify_escalated", str(pk)))
                done += 1
    return done
