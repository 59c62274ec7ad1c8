"""Reads for safety governance: findings with their waiver state, revisions and their sign-off counts (the revision
page itself is read by `catalog.selectors.signoff`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.db.models import (
    Count,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce

from catalog.domain.ownership import UNOWNED
from catalog.domain.rules import RULES
from catalog.models import CatalogRevision, Finding, RevisionReview, Waiver

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


def _active_waivers(now: datetime | None = None) -> QuerySet[Waiver]:
    return Waiver.objects.active(now).filter(tool=OuterRef("tool"), rule=OuterRef("rule")).order_by("-expires_at")


class WaiverState(TypedDict):
    """What findings_list annotates on each finding: its active waiver, if any."""

    waived_until: datetime | None
    waived_by: str | None
    waiver_reason: str | None


def findings_list(
    *,
    rule: str | None = None,
    severity: str | None = None,
    system: str | None = None,
    owner: str | None = None,
    waived: bool | None = None,
    tool_id: int | None = None,
    now: datetime | None = None,
) -> QuerySet[WithAnnotations[Finding, WaiverState]]:
    """Findings with their waiver state (waived_until, waived_by): one query, whatever the catalog size."""
    active = _active_waivers(now)
    qs = Finding.objects.select_related("tool", "tool__owner", "revision").annotate(
        waived_until=Subquery(active.values("expires_at")[:1]),
        waived_by=Subquery(active.values("granted_by__username")[:1]),
        waiver_reason=Subquery(active.values("justification")[:1]),
    )
    if rule:
        qs = qs.filter(rule=rule)
    if severity:
        qs = qs.filter(severity=severity)
    if system:
        qs = qs.filter(system=system)
    if owner == UNOWNED:
        qs = qs.filter(tool__isnull=False, tool__owner__isnull=True)
    elif owner:
        qs = qs.filter(tool__owner__slug=owner)
    if tool_id is not None:
        qs = qs.filter(tool_id=tool_id)
    if waived is True:
        qs = qs.filter(waived_until__isnull=False)
    elif waived is False:
        qs = qs.filter(waived_until__isnull=True)
    return qs.order_by("severity", "rule", "system", "tool__declared_id")


def finding_counts_per_rule(*, system: str | None = None, now: datetime | None = None) -> list[dict[str, object]]:
    """Per rule: severity, total, waived and open (not waived). One query."""
    qs = Finding.objects.all()
    if system:
        qs = qs.filter(system=system)
    qs = qs.annotate(is_waived=Exists(_active_waivers(now)))
    rows = (
        qs.values("rule", "severity")
        .annotate(total=Count("pk"), waived=Count("pk", filter=Q(is_waived=True)))
        .order_by("severity", "rule")
    )
    return [{**row, "open": row["total"] - row["waived"]} for row in rows]


def _counted_approvals() -> Coalesce:
    """Per revision: the safety officers whose approval counts (after the last request for changes), as the
    sign-off service counts them (`catalog.selectors.reviews.counted_approvals`), in one subquery."""
    last_request = (
        RevisionReview.objects.filter(revision=OuterRef("revision"), decision=RevisionReview.Decision.REQUEST_CHANGES)
        .order_by("-created_at")
        .values("created_at")[:1]
    )
    counted = (
        RevisionReview.objects.filter(revision=OuterRef("pk"), decision=RevisionReview.Decision.APPROVE)
        .annotate(last_request=Subquery(last_request))
        .filter(Q(last_request__isnull=True) | Q(created_at__gt=F("last_request")))
        .order_by()
        .values("revision")
        .annotate(n=Count("reviewer", distinct=True))
        .values("n")
    )
    return Coalesce(Subquery(counted), 0)


def revisions_list(*, system: str | None = None, state: str | None = None) -> QuerySet[CatalogRevision]:
    """Newest first, each with `approvals` (the sign-offs that count) beside its `signoffs_required`: one query."""
    qs = (
        CatalogRevision.objects.select_related("imported_by", "superseded_by")
        .annotate(approvals=_counted_approvals())
        .order_by("-created_at", "-pk")
    )
    if system:
        qs = qs.filter(system=system)
    if state:
        qs = qs.filter(review_state=state)
    return qs


# A group shows its message once when every finding says the same, else the first few distinct ones.
GROUP_MESSAGES_SHOWN = 3


@dataclass
class FindingGroup:
    """The findings of one (rule, severity), for the findings page: counted, the message once, the tools listed."""

    rule: str
    severity: str
    findings: list[Finding] = field(default_factory=list)
    # The first finding of each distinct message, in order, at most GROUP_MESSAGES_SHOWN (the page shows each in
    # the reader's language with `finding_text`; the English message is what groups them).
    messages: list[Finding] = field(default_factory=list)
    distinct_messages: int = 0
    waivable_rule: bool = False

    total: int = 0  # in the group, from the count query (the listed findings may be fewer: FINDINGS_LISTED_MAX)

    @property
    def count(self) -> int:
        return max(self.total, len(self.findings))

    @property
    def shown(self) -> int:
        return len(self.findings)

    @property
    def waived(self) -> int:
        return sum(1 for f in self.findings if getattr(f, "waived_until", None) is not None)

    @property
    def waivable(self) -> list[Finding]:
        """The findings a bulk waiver may cover: a tool's, of a waivable rule, not waived now."""
        if not self.waivable_rule:
            return []
        return [f for f in self.findings if f.tool_id is not None and getattr(f, "waived_until", None) is None]

    @property
    def key(self) -> str:
        return f"{self.severity}-{self.rule}"


# The page lists at most this many findings (the groups still count all of them): a 50,000-tool catalog has tens
# of thousands of `unowned` findings, and a page must cost the same whatever the catalog's size.
FINDINGS_LISTED_MAX = 500


def finding_groups(**filters: Any) -> list[FindingGroup]:
    """`findings_list(**filters)` grouped per (severity, rule), errors first: every group with its full count (one
    count query), and the first FINDINGS_LISTED_MAX findings listed (one query), grouped in Python."""
    groups: dict[tuple[str, str], FindingGroup] = {}
    seen: dict[tuple[str, str], set[str]] = {}
    counts = findings_list(**filters).order_by("severity", "rule").values("severity", "rule").annotate(n=Count("id"))
    for row in counts:
        spec = RULES.get(row["rule"])
        key = (row["severity"], row["rule"])
        groups[key] = FindingGroup(
            row["rule"], row["severity"], total=row["n"], waivable_rule=bool(spec and spec.waivable)
        )
        seen[key] = set()
    for finding in findings_list(**filters)[:FINDINGS_LISTED_MAX]:
        key = (finding.severity, finding.rule)
        group = groups.get(key)
        if group is None:  # a finding written between the two reads: counted with what is listed
            spec = RULES.get(finding.rule)
            group = groups[key] = FindingGroup(
                finding.rule, finding.severity, waivable_rule=bool(spec and spec.waivable)
            )
            seen[key] = set()
        group.findings.append(finding)
        if finding.message not in seen[key]:
            seen[key].add(finding.message)
            group.distinct_messages += 1
            if len(group.messages) < GROUP_MESSAGES_SHOWN:
                group.messages.append(finding)
    return list(groups.values())
