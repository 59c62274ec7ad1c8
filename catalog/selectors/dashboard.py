"""Reads for the dashboard: per-system counts and the grouped counts of the live catalog, a fixed handful of queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import (
    Count,
    Q,
)

from catalog.domain.vocabulary import Plane, ReviewState
from catalog.models import CatalogProfile, CatalogRevision, CatalogState, Finding, Tool
from catalog.rag.selectors.vectors import embedding_status
from catalog.selectors.catalog import plan_eligible_q_for


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


def dashboard() -> dict[str, Any]:
    """Counts for the dashboard: a fixed handful of grouped queries."""
    live = Tool.objects.live()

    def grouped(column: str) -> list[tuple[str, str, int]]:
        rows = live.values("system", column).annotate(n=Count("pk")).order_by("system", column)
        return [(r["system"], r[column] or "—", r["n"]) for r in rows]

    profiles = list(CatalogProfile.objects.order_by("slug"))
    counts = live.aggregate(**{f"p{i}": Count("pk", filter=plan_eligible_q_for(p)) for i, p in enumerate(profiles)})
    eligible = [(p, counts[f"p{i}"]) for i, p in enumerate(profiles)]
    findings = list(
        Finding.objects.filter(Q(tool__isnull=True) | Q(tool__retired_in__isnull=True))
        .values("severity", "rule")
        .annotate(n=Count("pk"))
        .order_by("severity", "-n", "rule")
    )
    pending = list(
        CatalogRevision.objects.exclude(review_state=ReviewState.APPROVED.value).order_by("-created_at")[:10]
    )
    return {
        "by_plane": grouped("plane"),
        "by_availability": grouped("availability"),
        "by_policy": grouped("effective_policy_class"),
        "eligible": eligible,
        "findings": findings,
        "findings_by_severity": {s: sum(r["n"] for r in findings if r["severity"] == s) for s in ("error", "warning")},
        "pending_revisions": pending,
        "embeddings": embedding_status(),
    }
