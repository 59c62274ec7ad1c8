"""Reads for the teams page."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Sum

from catalog.models import (
    OwnershipRule,
    Team,
    Tool,
)


def teams_overview() -> list[dict[str, Any]]:
    """Every team with its live tool count, findings counts and ownership rules: three queries. The findings come
    from the counts kept on each tool (Tool.findings_count, error_count), not from counting the findings."""
    counts = {
        row["owner"]: row
        for row in Tool.objects.live()
        .filter(owner__isnull=False)
        .values("owner")
        .annotate(n=Count("pk"), finding_total=Sum("findings_count"), errors=Sum("error_count"))
        .order_by()
    }
    rules: dict[int, list[OwnershipRule]] = {}
    for rule in OwnershipRule.objects.order_by("system", "plane", "module"):
        rules.setdefault(rule.team_id, []).append(rule)
    out = []
    for team in Team.objects.order_by("slug"):
        row = counts.get(team.pk, {})
        out.append(
            {
                "team": team,
                "tools": row.get("n", 0),
                "errors": row.get("errors") or 0,
                # a finding is an error or a warning (catalog.domain.rules)
                "warnings": (row.get("finding_total") or 0) - (row.get("errors") or 0),
                "rules": rules.get(team.pk, []),
            }
        )
    return out
