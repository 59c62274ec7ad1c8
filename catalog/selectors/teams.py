"""Reads for the teams page."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from catalog.models import (
    Finding,
    OwnershipRule,
    Team,
    Tool,
)


def teams_overview() -> list[dict[str, Any]]:
    """Every team with its live tool count, findings counts and ownership rules: three queries."""
    tools = dict(
        Tool.objects.live()
        .filter(owner__isnull=False)
        .values("owner")
        .annotate(n=Count("pk"))
        .values_list("owner", "n")
    )
    findings = {
        row["tool__owner"]: row
        for row in Finding.objects.filter(tool__owner__isnull=False, tool__retired_in__isnull=True)
        .values("tool__owner")
        .annotate(errors=Count("pk", filter=Q(severity="error")), warnings=Count("pk", filter=Q(severity="warning")))
    }
    rules: dict[int, list[OwnershipRule]] = {}
    for rule in OwnershipRule.objects.order_by("system", "plane", "module"):
        rules.setdefault(rule.team_id, []).append(rule)
    out = []
    for team in Team.objects.order_by("slug"):
        f = findings.get(team.pk, {})
        out.append(
            {
                "team": team,
                "tools": tools.get(team.pk, 0),
                "errors": f.get("errors", 0),
                "warnings": f.get("warnings", 0),
                "rules": rules.get(team.pk, []),
            }
        )
    return out
