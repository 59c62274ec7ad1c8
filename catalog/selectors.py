"""Reads for the catalog: bounded query counts whatever the catalog size."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Generic, TypedDict, TypeVar

from django.db.models import (
    Case,
    CharField,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)

from .domain.vocabulary import Plane
from .models import ApiToken, CatalogRevision, CatalogState, Finding, RevisionReview, Tool, ToolChange, Waiver
from .precompiled import PrecompiledQuery

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

# The owner filter's value for tools no ownership rule covers (catalog, findings, API: one spelling).
UNOWNED = "-"


def catalog_version() -> Version:
    """What names the live catalog exactly: each system's current revision. One small query.

    In-process caches of the catalog (owner lookup, the approvals gate, resolve) rebuild when it changes. The
    revision's creation time is part of it because ids alone can repeat after a test's rollback. Every API call
    that consults the catalog asks this first, so it is compiled once (see catalog.precompiled).
    """
    return tuple(_CATALOG_VERSION.rows())


_CATALOG_VERSION = PrecompiledQuery(
    lambda: CatalogState.objects.order_by("system").values_list(
        "system", "current_revision_id", "current_revision__created_at"
    )
)


Version = tuple[tuple[object, ...], ...]
T = TypeVar("T")


class PerCatalogVersion(Generic[T]):
    """A value derived from the live catalog (an index, the filter choices), kept until catalog_version()
    changes: one small query per use, `build(version)` once per change. Anything it derives must be written
    only by imports, which always record a new revision."""

    def __init__(self, build: Callable[[Version], T]) -> None:
        self._build = build
        self._kept: tuple[Version, T] | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        version = catalog_version()
        kept = self._kept
        if kept is not None and kept[0] == version:
            return kept[1]
        with self._lock:  # one rebuild per change, however many threads notice it
            if self._kept is None or self._kept[0] != version:
                self._kept = (version, self._build(version))
            return self._kept[1]

    def forget(self) -> None:
        """Drop the value (tests that roll the database back reuse revision ids)."""
        self._kept = None


@dataclass(frozen=True)
class SystemSummary:
    system: str
    live: int
    business: int
    mutating: int
    unowned: int
    baseline: int | None
    revision: CatalogRevision | None


def catalog_summary() -> list[SystemSummary]:
    """Per-system counts: two queries, whatever the catalog size."""
    counts = {
        row["system"]: row
        for row in Tool.objects.live()
        .values("system")
        .annotate(
            live=Count("pk"),
            business=Count("pk", filter=Q(plane=Plane.BUSINESS.value)),
            mutating=Count("pk", filter=Q(is_mutating=True)),
            unowned=Count("pk", filter=Q(owner__isnull=True)),
        )
    }
    states = {s.system: s.current_revision for s in CatalogState.objects.select_related("current_revision")}
    out = []
    for system in sorted(set(counts) | set(states)):
        row = counts.get(system, {})
        revision = states.get(system)
        out.append(
            SystemSummary(
                system=system,
                live=row.get("live", 0),
                business=row.get("business", 0),
                mutating=row.get("mutating", 0),
                unowned=row.get("unowned", 0),
                baseline=revision.baseline_count if revision else None,
                revision=revision,
            )
        )
    return out


# --- governance reads ------------------------------------------------------------------------------


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


def revisions_list(*, system: str | None = None, state: str | None = None) -> QuerySet[CatalogRevision]:
    qs = CatalogRevision.objects.select_related("imported_by").order_by("-created_at", "-pk")
    if system:
        qs = qs.filter(system=system)
    if state:
        qs = qs.filter(review_state=state)
    return qs


def revision_detail(system: str, number: int) -> tuple[CatalogRevision, list[ToolChange], list[RevisionReview]]:
    """A revision, its changes (safety-relevant first) and its reviews: three queries."""
    revision = CatalogRevision.objects.select_related("imported_by").get(system=system, number=number)
    changes = list(revision.changes.order_by("-safety_relevant", "kind", "declared_id"))
    reviews = list(revision.reviews.select_related("reviewer"))
    return revision, changes, reviews


def api_tokens_list(*, now: datetime) -> QuerySet[ApiToken]:
    """Every service token with its `state` (active, expired, revoked): live ones first, then by name.

    The state is ApiToken.is_usable's rule, which ScopedBearer applies (revoked wins over expired), so
    the console shows exactly what the API will do with the token at `now`. One query.
    """
    revoked, expired = Q(revoked_at__isnull=False), Q(expires_at__lte=now)
    return ApiToken.objects.annotate(
        state=Case(
            When(revoked, then=Value("revoked")),
            When(expired, then=Value("expired")),
            default=Value("active"),
            output_field=CharField(),
        ),
        state_rank=Case(
            When(revoked, then=Value(2)), When(expired, then=Value(1)), default=Value(0), output_field=IntegerField()
        ),
    ).order_by("state_rank", "name")
