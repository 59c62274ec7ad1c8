"""Reads for the catalog: bounded query counts whatever the catalog size."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from .domain.vocabulary import Plane
from .models import CatalogRevision, CatalogState, Tool


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
