"""`{% approval_figures as figures %}`: the dashboard's approval pictures (catalog's `dashboard.html` draws them with
the `charts` tags). Here, not in catalog, because catalog never imports approvals (tests/test_architecture.py):
the catalog page reaches approvals only through a template library, as it does through the context processor.

Read-only, two queries: the pending requests per tier, and the decision latency (suspended → decided) of the
requests decided in the last days, its median per day computed here (SQLite has no median aggregate).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from statistics import median
from typing import Any

from django import template
from django.db.models import Count
from django.utils import formats, timezone

from approvals.labels import TIER_LABELS, label
from approvals.models import TIER_KEYS, ApprovalRequest

register = template.Library()

LATENCY_DAYS = 7


@dataclass(frozen=True)
class ApprovalFigures:
    waiting: list[tuple[str, int]]  # (tier word, pending now), every tier
    latency: list[tuple[str, int]]  # (day, median seconds from suspension to decision; 0 when none decided)
    decided: int  # requests decided in the latency window

    @property
    def any_waiting(self) -> bool:
        return any(n for _, n in self.waiting)


def approval_figures_now(*, days: int = LATENCY_DAYS, now: Any = None) -> ApprovalFigures:
    now = now or timezone.now()
    counts = dict.fromkeys(TIER_KEYS, 0)
    for row in ApprovalRequest.objects.pending(now).values("tier_key").annotate(n=Count("pk")).order_by():
        counts[row["tier_key"]] = row["n"]
    today = timezone.localdate(now)
    first = today - timedelta(days=days - 1)
    per_day: dict[Any, list[float]] = {first + timedelta(days=i): [] for i in range(days)}
    since = timezone.make_aware(datetime.combine(first, time.min))
    decided = ApprovalRequest.objects.filter(decided_at__gte=since).values_list("created_at", "decided_at")
    for created, decided_at in decided:
        if decided_at is None:  # the filter excludes it; the type does not know
            continue
        per_day.setdefault(timezone.localdate(decided_at), []).append((decided_at - created).total_seconds())
    latency = [
        (formats.date_format(day, "D j"), round(median(values)) if values else 0)
        for day, values in sorted(per_day.items())
        if day >= first
    ]
    return ApprovalFigures(
        waiting=[(label(TIER_LABELS, tier), counts[tier]) for tier in TIER_KEYS],
        latency=latency,
        decided=sum(len(v) for v in per_day.values()),
    )


@register.simple_tag
def approval_figures() -> ApprovalFigures:
    return approval_figures_now()
