"""The `tucan-tools/v1` dialect (TOOLS.md): createTucanTool metadata and agents with their bound categories.

Every TUCAN tool maps to plane `business`, module = category, availability `production`, no policy class,
retry class and idempotency `none`, no HITL tier: the source declares none of them.
"""

from __future__ import annotations

from typing import Any

from catalog.domain.checker import Checker
from catalog.domain.descriptor import Descriptor
from catalog.domain.manifest.base import (
    DESCRIPTION_MAX,
    FRAGMENT_MAX,
    KEYWORD_MAX,
    KEYWORDS_MAX,
    SLUG_CHARS,
    SLUG_MAX,
    TOOLS_MAX,
    Dialect,
    Manifest,
)
from catalog.domain.manifest.sections import parse_agents, parse_baseline, parse_ownership, parse_source, parse_teams
from catalog.domain.manifest.tools import check_tool_ids, label_tool_problems, parse_input_schema, parse_tool_id
from catalog.domain.vocabulary import Availability, Idempotency, Plane, RetryClass, System

TUCAN_FORMAT = "tucan-tools/v1"

_TOP_REQUIRED = ("format", "agents", "tools")
_TOP_OPTIONAL = ("source", "baselineCount", "teams", "ownership")
_TOOL_KEYS = ("id", "description", "category", "inputSchema", "metadata")
_META_REQUIRED = ("mutating",)
_META_OPTIONAL = ("ragDescription", "ragKeywords", "alwaysInclude", "outputInstructions", "outputContainsIds")

# TUCAN gives one flat keyword list; the findings detect each keyword's language later.
UNDETERMINED_LANGUAGE = "und"


def parse_tucan(data: dict[str, Any], manifest: Manifest, c: Checker, known_team_ids: set[str]) -> None:
    """The whole document, section by section."""
    c.keys(data, "", _TOP_REQUIRED, _TOP_OPTIONAL)
    parse_source(data, manifest, c, required=False)
    parse_baseline(data, manifest, c)
    parse_teams(data, manifest, c)
    parse_ownership(data, manifest, c, known_team_ids)
    parse_agents(data, manifest, c)
    for i, raw in enumerate(c.list(data.get("tools", []), "tools", max_items=TOOLS_MAX)):
        descriptor = _parse_tool(raw, f"tools[{i}]", c)
        if descriptor is not None:
            manifest.tools.append(descriptor)
    # TUCAN allows ids that fold together (show-modal vs show_modal): findings flag them, import does not.
    check_tool_ids(manifest, c, fold_collisions=False)


def _parse_tool(raw: Any, where: str, c: Checker) -> Descriptor | None:
    """One createTucanTool definition, mapped onto a descriptor."""
    obj = c.obj(raw, where)
    if obj is None:
        return None
    before = len(c.problems)
    c.keys(obj, where, _TOOL_KEYS, ())
    tool_id = parse_tool_id(obj, where, c)
    category = c.nonempty(obj, "category", where, max_length=SLUG_MAX, chars=SLUG_CHARS)
    schema = parse_input_schema(obj, where, c)
    meta = c.obj(obj.get("metadata", {}), f"{where}.metadata") or {}
    mwhere = f"{where}.metadata"
    c.keys(meta, mwhere, _META_REQUIRED, _META_OPTIONAL)
    keywords: dict[str, list[str]] = {}
    if meta.get("ragKeywords") is not None:
        flat = c.strings(meta["ragKeywords"], f"{mwhere}.ragKeywords", max_items=KEYWORDS_MAX, max_length=KEYWORD_MAX)
        if flat:
            keywords = {UNDETERMINED_LANGUAGE: flat}
    descriptor = Descriptor(
        declared_id=tool_id,
        plane=Plane.BUSINESS.value,
        module=category,
        category=category,
        availability=Availability.PRODUCTION.value,
        mutating=c.boolean(meta, "mutating", mwhere),
        retry_class=RetryClass.NONE.value,
        idempotency=Idempotency.NONE.value,
        description=c.string(obj, "description", where, max_length=DESCRIPTION_MAX),
        rag_description=c.string(meta, "ragDescription", mwhere, max_length=DESCRIPTION_MAX),
        rag_keywords=keywords,
        output_instructions=c.string(meta, "outputInstructions", mwhere, nullable=True, max_length=FRAGMENT_MAX),
        output_contains_ids=c.boolean(meta, "outputContainsIds", mwhere),
        always_include=c.boolean(meta, "alwaysInclude", mwhere),
        input_schema=schema,
    )
    label_tool_problems(c, before, tool_id)
    return descriptor


DIALECT = Dialect(format=TUCAN_FORMAT, system=System.TUCAN.value, parse=parse_tucan)
