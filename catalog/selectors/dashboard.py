"""Reads for the dashboard: per-system counts and the grouped counts of the live catalog, a fixed handful of queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import (
    Count,
    Q,
)

from catalog.domain.rules import RULES
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


# The findings chart reaches this many revisions back per system.
FINDINGS_HISTORY = 10


@dataclass(frozen=True)
class FindingsHistory:
    """One system's findings per revision, oldest first: (label, all findings, errors) for `bar_chart`."""

    system: str
    points: list[tuple[str, int, int]]


def findings_history(*, revisions: int = FINDINGS_HISTORY) -> list[FindingsHistory]:
    """Per system, the declaration findings (errors among them) each of its last `revisions` imports left.

    The counts are rebuilt backwards from today's findings with the delta every import keeps
    (`findings_added` / `findings_cleared`): before an import = after it − what it added + what it cleared. Runtime
    findings are left out (no import adds or clears them). Three queries, whatever the catalog size."""
    declaration = [r.id for r in RULES.values() if not r.runtime]
    now = {
        (row["system"], row["severity"]): row["n"]
        for row in Finding.objects.filter(rule__in=declaration)
        .filter(Q(tool__isnull=True) | Q(tool__retired_in__isnull=True))
        .values("system", "severity")
        .annotate(n=Count("pk"))
    }
    current = dict(
        CatalogState.objects.filter(current_revision__isnull=False).values_list("system", "current_revision__number")
    )
    if not current:
        return []
    window = Q()
    for system, number in current.items():
        window |= Q(system=system, number__gt=number - revisions, number__lte=number)
    history: dict[str, list[tuple[str, int, int]]] = {}
    carry: dict[str, tuple[int, int]] = {}  # (all, errors) after the revision read next, per system
    rows = CatalogRevision.objects.filter(window).order_by("system", "-number")
    for rev in rows.values("system", "number", "findings_added", "findings_cleared"):
        system = rev["system"]
        errors_now = now.get((system, "error"), 0)
        total, errors = carry.get(system, (errors_now + now.get((system, "warning"), 0), errors_now))
        history.setdefault(system, []).append((f"r{rev['number']}", max(total, 0), max(errors, 0)))
        added, cleared = _severity_counts(rev["findings_added"]), _severity_counts(rev["findings_cleared"])
        carry[system] = (total - added[0] + cleared[0], errors - added[1] + cleared[1])
    return [FindingsHistory(system, list(reversed(points))) for system, points in sorted(history.items())]


def _severity_counts(refs: list[list[str | None]]) -> tuple[int, int]:
    """(all, errors) among [rule, tool] references, each rule's severity from its registration."""
    severities = [RULES[rule].severity for rule, _tool in refs if rule in RULES and not RULES[rule].runtime]
    return len(severities), sum(1 for s in severities if s == "error")
