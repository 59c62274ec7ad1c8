"""The live catalog as the suspend gate reads it: tools by every spelling, and profiles, per process.

The gate runs on every tool call of the runtime. Reading the catalog is one small query (the current
revision of each system); the tools and profiles are read again only when that changes. Every accepted
import records a new revision and points CatalogState at it in the same transaction, so the index can
never answer for a catalog that is no longer current. (An import that changes nothing writes nothing,
and leaves the index as valid as before.)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from catalog.core.cache import PerCatalogVersion
from catalog.domain.keys import canonical_key
from catalog.domain.mcp import client_spellings
from catalog.domain.policy import effective_policy_class, is_mutating
from catalog.domain.vocabulary import mcp_server_of
from catalog.models import Tool
from catalog.selectors.served import served_profiles


@dataclass(frozen=True)
class GateTool:
    """What the gate and a request need of a tool (the row also holds RAG text and fragments)."""

    pk: int
    system: str
    declared_id: str
    canonical_key: str
    llm_name: str
    plane: str
    module: str
    category: str
    availability: str
    policy_domain: str | None
    hitl_tier: str | None
    is_mutating: bool
    effective_policy_class: str
    input_schema: dict[str, Any] | None


@dataclass(frozen=True)
class GateProfile:
    slug: str
    availabilities: tuple[str, ...]
    includes: frozenset[str]
    clinical: bool = False
    system: str = ""  # the system that declared it: its includes name that system's tools


GATE_TOOL_FIELDS = tuple(f for f in GateTool.__dataclass_fields__ if f != "pk")


@dataclass
class CatalogIndex:
    version: tuple[Any, ...]
    by_declared_id: dict[str, list[GateTool]] = field(default_factory=lambda: defaultdict(list))
    by_llm_name: dict[str, list[GateTool]] = field(default_factory=lambda: defaultdict(list))
    by_key: dict[str, list[GateTool]] = field(default_factory=lambda: defaultdict(list))
    # The same under clinical profiles: a tool is called there by the aliases in effect (an added or moved spelling
    # waits for sign-off, `catalog.domain.effect.aliases_class`).
    by_key_in_effect: dict[str, list[GateTool]] = field(default_factory=lambda: defaultdict(list))
    profiles: dict[str, GateProfile] = field(default_factory=dict)
    # Tools whose newest declaration awaits sign-off: what clinical profiles are served instead (None: nothing,
    # the tool was never signed off). Every other tool is served as declared.
    in_effect: dict[int, GateTool | None] = field(default_factory=dict)

    def served(self, tool: GateTool, *, clinical: bool) -> GateTool | None:
        """The tool as a profile sees it (catalog.domain.effect.declaration_for): clinical profiles what is in
        effect."""
        if not clinical or tool.pk not in self.in_effect:
            return tool
        return self.in_effect[tool.pk]


def _build(version: tuple[Any, ...]) -> CatalogIndex:
    index = CatalogIndex(version)
    rows = (
        Tool.objects.live().order_by("pk").values("pk", "aliases", "awaiting_signoff", "in_effect", *GATE_TOOL_FIELDS)
    )
    for row in rows:
        aliases = row.pop("aliases") or []
        awaiting, in_effect = row.pop("awaiting_signoff"), row.pop("in_effect")
        tool = GateTool(**row)
        index.by_declared_id[tool.declared_id].append(tool)
        index.by_llm_name[tool.llm_name].append(tool)
        own = {tool.canonical_key, *_mcp_client_keys(tool)}
        keys = own | {canonical_key(a) for a in aliases} if aliases else own
        for key in keys:
            index.by_key[key].append(tool)
        if awaiting:
            index.in_effect[tool.pk] = _in_effect_tool(tool, in_effect)
            signed = (in_effect or {}).get("aliases") or []
            if signed != aliases:
                keys = own | {canonical_key(a) for a in signed}
        for key in keys:
            index.by_key_in_effect[key].append(tool)
    for p in served_profiles().values():
        index.profiles[p.slug] = GateProfile(p.slug, p.availabilities, frozenset(p.includes), p.clinical, p.system)
    return index


def _mcp_client_keys(tool: GateTool) -> set[str]:
    """An MCP tool is also called by its server and name as clients expose it (`mcp__time__get_current_time`,
    `time_get_current_time`, …): "by server and tool name"."""
    server = mcp_server_of(tool.system)
    return {canonical_key(name) for name in client_spellings(server, tool.declared_id)} if server else set()


def _in_effect_tool(tool: GateTool, in_effect: dict[str, Any] | None) -> GateTool | None:
    """The gate's view of the declaration in effect (derivations recomputed from it), or None."""
    if in_effect is None:
        return None
    mutating, policy_class = bool(in_effect["mutating"]), in_effect["policy_class"]
    return replace(
        tool,
        plane=in_effect["plane"],
        module=in_effect["module"],
        category=in_effect["category"],
        availability=in_effect["availability"],
        policy_domain=in_effect["policy_domain"],
        hitl_tier=in_effect["hitl_tier"],
        is_mutating=is_mutating(mutating=mutating, policy_class=policy_class),
        effective_policy_class=effective_policy_class(mutating=mutating, policy_class=policy_class),
        input_schema=in_effect["input_schema"],
    )


def catalog_index() -> CatalogIndex:
    """The index of the current catalog: one query when nothing changed, a rebuild when it did."""
    return _INDEX.get()


def forget() -> None:
    """Drop the index (tests that roll the database back reuse revision ids)."""
    _INDEX.forget()


_INDEX = PerCatalogVersion(_build)
