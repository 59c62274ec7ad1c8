"""Reads for safety governance: findings with their waiver state, revisions and their sign-off counts (the revision
page itself is read by `catalog.selectors.signoff`)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

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
