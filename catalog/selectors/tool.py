"""Reads for the tool page: everything it shows, in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_lazy as _

from catalog.domain.budget import ManifestLine, manifest_line_of
from catalog.domain.metadata import metadata_v2
from catalog.domain.profiles import is_plan_eligible
from catalog.models import (
    Agent,
    CatalogProfile,
    Tool,
    ToolChange,
)
from catalog.services.findings import descriptor_of


@dataclass
class ToolPage:
    tool: Tool
    manifest_line: ManifestLine
    eligibility: list[tuple[CatalogProfile, bool]]
    agents: list[Agent]
    changes: list[ToolChange]
    spellings: list[tuple[Any, str]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)  # CondorToolMetadataV2, the derived projection


def tool_page(system: str, declared_id: str) -> ToolPage:
    """Everything the tool page shows, in a fixed number of queries. Raises Tool.DoesNotExist."""
    tool = Tool.objects.select_related(
        "owner", "owner_rule", "safety_revision", "first_revision", "last_changed_revision", "retired_in"
    ).get(system=system, declared_id=declared_id)
    profiles = list(CatalogProfile.objects.order_by("slug"))
    eligibility = [
        (
            p,
            is_plan_eligible(
                plane=tool.plane,
                availability=tool.availability,
                declared_id=tool.declared_id if p.system == tool.system else "",
                profile_availabilities=p.availabilities,
                profile_includes=p.includes,
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
    ]
    metadata = metadata_v2(descriptor_of(tool), owner_team=tool.owner.slug if tool.owner else None)
    return ToolPage(tool, line, eligibility, agents, changes, spellings, metadata)
