"""Reads for the dashboard: per-system counts and the grouped counts of the live catalog, a fixed handful of queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import (
    Count,
    Q,
)

from catalog.core.cache import PerCatalogVersion, Version
from catalog.domain.rules import RULES
from catalog.domain.vocabulary import Plane, ReviewState
from catalog.models import CatalogRevision, CatalogState, Finding, Tool
from catalog.rag.selectors.vectors import embedding_status
from catalog.selectors.catalog import plan_eligible_q_for
from catalog.selectors.served import ServedProfile, served_profiles


@dataclass(frozen=True)
class SystemSummary:
    system: str
    live: int
    business: int
    mutating: int
    unowned: int
    baseline: int | None
    revision: CatalogRevision | None


@dataclass(frozen=True)
class ToolCounts:
    """What the dashboard counts of the live tools, from one pass over them; kept per catalog version (imports
    alone write the tools' axes, owners and the profiles), so a dashboard view after the first reads no tool."""

    per_system: dict[str, dict[str, int]]  # system -> live, business, mutating, unowned
    by_plane: list[tuple[str, str, int]]
    by_availability: list[tuple[str, str, int]]
    by_policy: list[tuple[str, str, int]]
    eligible: list[tuple[ServedProfile, int]]


def _tool_counts(version: Version) -> ToolCounts:
    """One GROUP BY over the live tools' small columns (and each profile's explicit includes counted in the same
    pass); every figure of the dashboard's tool charts is a sum over its rows."""
    profiles = list(served_profiles().values())
    extra = {f"p{i}": Count("pk", filter=plan_eligible_q_for(p)) for i, p in enumerate(profiles)}
    rows = list(
        Tool.objects.live()
        .values("system", "plane", "availability", "effective_policy_class")
        .annotate(
            n=Count("pk"),
            mutating=Count("pk", filter=Q(is_mutating=True)),
            unowned=Count("pk", filter=Q(owner__isnull=True)),
            **extra,
        )
        .order_by()
    )
    per_system: dict[str, dict[str, int]] = {}
    grouped: dict[str, dict[tuple[str, str], int]] = {"plane": {}, "availability": {}, "effective_policy_class": {}}
    for row in rows:
        counts = per_system.setdefault(row["system"], {"live": 0, "business": 0, "mutating": 0, "unowned": 0})
        counts["live"] += row["n"]
        counts["business"] += row["n"] if row["plane"] == Plane.BUSINESS.value else 0
        counts["mutating"] += row["mutating"]
        counts["unowned"] += row["unowned"]
        for column, groups in grouped.items():
            key = (row["system"], row[column] or "—")
            groups[key] = groups.get(key, 0) + row["n"]

    def listed(column: str) -> list[tuple[str, str, int]]:
        return [(system, value, n) for (system, value), n in sorted(grouped[column].items())]

    return ToolCounts(
        per_system=per_system,
        by_plane=listed("plane"),
        by_availability=listed("availability"),
        by_policy=listed("effective_policy_class"),
        eligible=[(p, sum(row[f"p{i}"] for row in rows)) for i, p in enumerate(profiles)],
    )


_TOOL_COUNTS = PerCatalogVersion(_tool_counts)


def catalog_summary() -> list[SystemSummary]:
    """Per-system counts: the kept tool counts (one small query while the catalog is unchanged) and the states."""
    counts = _TOOL_COUNTS.get().per_system
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
    """Counts for the dashboard: the kept tool counts, the findings grouped by rule, the pending revisions and the
    embedding status."""
    tools = _TOOL_COUNTS.get()
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
        "by_plane": tools.by_plane,
        "by_availability": tools.by_availability,
        "by_policy": tools.by_policy,
        "eligible": tools.eligible,
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
