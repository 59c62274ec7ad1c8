"""Reads for the tool page: everything it shows, in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_lazy as _

from catalog.domain.budget import ManifestLine, manifest_line_of
from catalog.domain.mcp import client_spellings, declared_vs_effective, pin_of
from catalog.domain.metadata import metadata_v2
from catalog.domain.profiles import plan_eligible_under
from catalog.models import (
    Agent,
    Tool,
    ToolChange,
)
from catalog.selectors.served import ServedProfile, served_profiles


@dataclass
class ToolPage:
    tool: Tool
    manifest_line: ManifestLine
    eligibility: list[tuple[ServedProfile, bool]]
    agents: list[Agent]
    changes: list[ToolChange]
    spellings: list[tuple[Any, str]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)  # CondorToolMetadataV2, the derived projection
    mcp: McpView | None = None


@dataclass(frozen=True)
class McpView:
    """An MCP tool's own declaration: its hints as declared beside what the console reads them as, and its pin."""

    server: str
    title: str | None
    hints: list[tuple[str, Any, bool]]  # (hint, declared or None, effective)
    annotations_declared: bool
    output_schema: dict[str, Any] | None
    pin: str  # of the newest declaration
    pinned: str  # of the declaration in effect ("" when never signed off)

    @property
    def changed_since_pinned(self) -> bool:
        return self.pin != self.pinned


def _mcp_view(tool: Tool) -> McpView | None:
    if tool.mcp is None:
        return None
    declared = tool.mcp
    return McpView(
        server=declared.get("server", ""),
        title=declared.get("title"),
        hints=declared_vs_effective(declared.get("annotations")),
        annotations_declared=declared.get("annotations") is not None,
        output_schema=declared.get("outputSchema"),
        pin=pin_of(tool.declared()),
        pinned=pin_of(tool.in_effect),
    )


def tool_page(system: str, declared_id: str) -> ToolPage:
    """Everything the tool page shows, in a fixed number of queries. Raises Tool.DoesNotExist."""
    tool = Tool.objects.select_related(
        "owner", "owner_rule", "safety_revision", "first_revision", "last_changed_revision", "retired_in"
    ).get(system=system, declared_id=declared_id)
    profiles = list(served_profiles().values())
    eligibility = [
        (
            p,
            plan_eligible_under(
                p, plane=tool.plane, availability=tool.availability, declared_id=tool.declared_id, system=tool.system
            ),
        )
        for p in profiles
    ]
    agents = [a for a in Agent.objects.filter(system=tool.system) if tool.category and tool.category in a.categories]
    changes = list(tool.changes.select_related("revision").order_by("-revision__number"))
    line = manifest_line_of(tool)
    spellings = [
        (_("declared id"), tool.declared_id),
        (_("canonical key"), tool.canonical_key),
        (_("LLM name"), tool.llm_name),
        *[(_("alias"), alias) for alias in tool.aliases or []],
        *[
            (_("MCP client name"), name)
            for name in (client_spellings(tool.mcp["server"], tool.declared_id)[1:] if tool.mcp else [])
        ],
    ]
    metadata = metadata_v2(tool.descriptor(), owner_team=tool.owner.slug if tool.owner else None)
    return ToolPage(tool, line, eligibility, agents, changes, spellings, metadata, _mcp_view(tool))
