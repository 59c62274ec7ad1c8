"""Reads for the MCP server pages, in a fixed number of queries whatever the number of servers and tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q

from catalog.domain.mcp import effective_hints, overlay_lines
from catalog.models import CatalogRevision, Finding, McpServer, Team, Tool


@dataclass(frozen=True)
class ServerRow:
    server: McpServer
    tools: int
    awaiting: int
    errors: int


def mcp_servers_overview() -> list[ServerRow]:
    """Every registered server with its live tools, those awaiting sign-off and its open error findings (three
    queries)."""
    servers = list(McpServer.objects.order_by("slug"))
    systems = [s.system for s in servers]
    counts = {
        row["system"]: row
        for row in Tool.objects.live()
        .filter(system__in=systems)
        .values("system")
        .annotate(n=Count("pk"), awaiting=Count("pk", filter=Q(awaiting_signoff=True)))
    }
    errors = dict(
        Finding.objects.filter(system__in=systems, severity="error")
        .values("system")
        .annotate(n=Count("pk"))
        .values_list("system", "n")
    )
    return [
        ServerRow(
            s,
            counts.get(s.system, {}).get("n", 0),
            counts.get(s.system, {}).get("awaiting", 0),
            errors.get(s.system, 0),
        )
        for s in servers
    ]


@dataclass
class ServerPage:
    server: McpServer
    tools: list[dict[str, Any]]
    revisions: list[CatalogRevision]
    teams: list[str]
    rules_text: str


def mcp_server_page(slug: str) -> ServerPage:
    """One server: its tools with what their hints are read as, recent revisions, the overlay as editor lines
    (five queries). Raises McpServer.DoesNotExist."""
    server = McpServer.objects.get(slug=slug)
    rows = (
        Tool.objects.live()
        .filter(system=server.system)
        .select_related("owner")
        .order_by("declared_id")
        .only(
            "pk",
            "system",
            "declared_id",
            "mcp",
            "hitl_tier",
            "policy_domain",
            "is_mutating",
            "owner__slug",
            "awaiting_signoff",
        )
    )
    errors = dict(
        Finding.objects.filter(system=server.system, severity="error", tool__isnull=False)
        .values("tool")
        .annotate(n=Count("pk"))
        .values_list("tool", "n")
    )
    tools = [
        {
            "tool": t,
            "hints": effective_hints((t.mcp or {}).get("annotations")),
            "declared": (t.mcp or {}).get("annotations") is not None,
            "errors": errors.get(t.pk, 0),
        }
        for t in rows
    ]
    revisions = list(CatalogRevision.objects.filter(system=server.system).order_by("-number")[:5])
    teams = list(Team.objects.order_by("slug").values_list("slug", flat=True))
    return ServerPage(server, tools, revisions, teams, overlay_lines(server.governance))
