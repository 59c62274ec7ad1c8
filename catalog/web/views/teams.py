"""The teams that own tools, and one team's tools and ownership rules."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from catalog.core.access import page
from catalog.models import Team
from catalog.selectors.catalog import CatalogFilters, catalog_rows, catalog_tools
from catalog.selectors.teams import teams_overview
from catalog.usage.selectors.health import team_health

TEAM_PAGE_TOOLS = 100


@page("teams")
def teams_page(request: HttpRequest) -> HttpResponse:
    return render(request, "catalog/teams.html", {"teams": teams_overview()})


@page("team")
def team_page(request: HttpRequest, slug: str) -> HttpResponse:
    team = get_object_or_404(Team, slug=slug)
    owned = CatalogFilters(owner=slug)
    tools = catalog_rows(owned)  # the catalog table's rows: plain dicts, no texts
    return render(
        request,
        "catalog/team.html",
        {
            "team": team,
            # The first tools by id, and how many there are: a team of thousands is browsed in the catalog,
            # filtered by its owner (the link under the table), not listed here whole.
            "tools": list(tools[:TEAM_PAGE_TOOLS]),
            "tool_count": catalog_tools(owned).count(),  # over the team's index alone
            "rules": team.ownership_rules.order_by("system", "plane"),
            "health": team_health(team.pk, shown=TEAM_PAGE_TOOLS),
        },
    )
