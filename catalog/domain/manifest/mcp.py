"""The `mcp-tools/v1` dialect (TOOLS.md): an MCP server's identity, its `tools/list` result as MCP defines it,
and the governance overlay a catalog admin lays over it.

Each server is a catalog of its own, the system `mcp:<server id>`. Every tool maps to plane `business`,
availability `production`, the module of the overlay rule that matched it (else the server id), the overlay's
policy domain and HITL tier, and the mutating flag, retry class and idempotency its annotations imply with MCP's
defaults for a missing hint (catalog.domain.mcp). The MCP description is the tool's `ragDescription`: what the
model reads and what retrieval matches it by. Title, output schema and annotations are kept exactly as declared
in the tool's `mcp` field; the pin covers all of it.
"""

from __future__ import annotations

from typing import Any

from catalog.domain.checker import Checker, type_name
from catalog.domain.descriptor import Descriptor
from catalog.domain.manifest.base import (
    DESCRIPTION_MAX,
    NAME_MAX,
    SCHEMA_BYTES_MAX,
    SLUG_CHARS,
    SLUG_MAX,
    TOOLS_MAX,
    Dialect,
    Manifest,
    OwnershipRule,
)
from catalog.domain.manifest.sections import parse_source, parse_teams
from catalog.domain.manifest.tools import (
    check_tool_ids,
    label_tool_problems,
    nesting_depth,
    parse_input_schema,
    parse_tool_id,
)
from catalog.domain.mcp import ANNOTATION_KEYS, Overlay, OverlayRule, axes_from_hints, overlay_for, ownership_of
from catalog.domain.vocabulary import (
    Availability,
    HitlTier,
    Plane,
    mcp_server_id_problem,
    mcp_system,
)

MCP_FORMAT = "mcp-tools/v1"

_TOP_REQUIRED = ("format", "server", "tools")
_TOP_OPTIONAL = ("source", "teams", "governance")
_SERVER_REQUIRED = ("id", "name", "version", "protocolVersion")
_SERVER_OPTIONAL = ("title", "instructions")
_TOOL_REQUIRED = ("name", "inputSchema")
# `icons`, `execution` and `_meta` are MCP fields no model reads and no gate derives from: accepted, not kept.
_TOOL_OPTIONAL = ("title", "description", "outputSchema", "annotations", "icons", "execution", "_meta")
_OVERLAY_KEYS = ("team", "policyDomain", "tools")
_OVERLAY_RULE_KEYS = ("match", "policyDomain", "hitlTier", "team")
OVERLAY_RULES_MAX = 1_000
PATTERN_MAX = 200
INSTRUCTIONS_MAX = 8_000
VERSION_MAX = 40


def parse_mcp(data: dict[str, Any], manifest: Manifest, c: Checker, known_team_ids: set[str]) -> None:
    """The whole document: identity, teams, overlay, tools."""
    c.keys(data, "", _TOP_REQUIRED, _TOP_OPTIONAL)
    server_id, identity = _parse_server(data.get("server", {}), c)
    manifest.system = mcp_system(server_id) if server_id else manifest.system
    parse_source(data, manifest, c, required=False)
    if not manifest.source_repository:
        manifest.source_repository = identity.get("name", "")
        manifest.source_commit = f"{identity.get('version', '')} (MCP {identity.get('protocolVersion', '')})"[:SLUG_MAX]
    parse_teams(data, manifest, c)
    overlay = _parse_overlay(data.get("governance"), c, known_team_ids | {t.id for t in manifest.teams})
    manifest.ownership = [
        OwnershipRule(Plane.BUSINESS.value, module, team) for module, team in ownership_of(server_id, overlay)
    ]
    raw_tools = c.list(data.get("tools", []), "tools", max_items=TOOLS_MAX)
    for i, raw in enumerate(raw_tools):
        descriptor = _parse_tool(raw, f"tools[{i}]", c, server_id, overlay)
        if descriptor is not None:
            manifest.tools.append(descriptor)
    check_tool_ids(manifest, c, fold_collisions=False)
    manifest.mcp = {"server": identity, "governance": data.get("governance"), "tools": raw_tools}


def _parse_server(raw: Any, c: Checker) -> tuple[str, dict[str, Any]]:
    """`server`: the `initialize` result's serverInfo (name, version, title) and protocolVersion, under the id the
    console knows the server by."""
    obj = c.obj(raw, "server")
    if obj is None:
        return "", {}
    c.keys(obj, "server", _SERVER_REQUIRED, _SERVER_OPTIONAL)
    server_id = c.string(obj, "id", "server")
    problem = mcp_server_id_problem(server_id) if "id" in obj else None
    if problem:
        c.problem("server.id", problem)
        server_id = ""
    identity = {
        "id": server_id,
        "name": c.nonempty(obj, "name", "server", max_length=NAME_MAX),
        "version": c.string(obj, "version", "server", max_length=VERSION_MAX),
        "protocolVersion": c.string(obj, "protocolVersion", "server", max_length=VERSION_MAX),
        "title": c.string(obj, "title", "server", nullable=True, max_length=NAME_MAX),
        "instructions": c.string(obj, "instructions", "server", nullable=True, max_length=INSTRUCTIONS_MAX),
    }
    return server_id, identity


def _parse_overlay(raw: Any, c: Checker, team_ids: set[str]) -> Overlay:
    """`governance`: the server's owning team and policy domain, and per-pattern domain, tier and team."""
    if raw is None:
        return Overlay()
    obj = c.obj(raw, "governance")
    if obj is None:
        return Overlay()
    c.keys(obj, "governance", (), _OVERLAY_KEYS)
    rules = []
    for i, item in enumerate(c.list(obj.get("tools", []), "governance.tools", max_items=OVERLAY_RULES_MAX)):
        where = f"governance.tools[{i}]"
        r = c.obj(item, where)
        if r is None:
            continue
        c.keys(r, where, ("match",), _OVERLAY_RULE_KEYS[1:])
        rules.append(
            OverlayRule(
                match=c.nonempty(r, "match", where, max_length=PATTERN_MAX),
                policy_domain=c.string(r, "policyDomain", where, nullable=True, max_length=SLUG_MAX, chars=SLUG_CHARS),
                hitl_tier=c.enum(r, "hitlTier", where, HitlTier, nullable=True),
                team=_team(r, where, c, team_ids),
            )
        )
    c.unique(((f"governance.tools[{i}].match", r.match) for i, r in enumerate(rules) if r.match), "pattern")
    return Overlay(
        team=_team(obj, "governance", c, team_ids),
        policy_domain=c.string(obj, "policyDomain", "governance", nullable=True, max_length=SLUG_MAX, chars=SLUG_CHARS),
        rules=tuple(rules),
    )


def _team(obj: dict[str, Any], where: str, c: Checker, team_ids: set[str]) -> str | None:
    team = c.string(obj, "team", where, nullable=True, max_length=SLUG_MAX, chars=SLUG_CHARS)
    if team and team not in team_ids:
        c.problem(f"{where}.team", f"unknown team {team!r}; declare it under teams or import it with a catalog first")
    return team or None


def _parse_tool(raw: Any, where: str, c: Checker, server_id: str, overlay: Overlay) -> Descriptor | None:
    """One MCP Tool object, mapped onto a descriptor."""
    obj = c.obj(raw, where)
    if obj is None:
        return None
    before = len(c.problems)
    c.keys(obj, where, _TOOL_REQUIRED, _TOOL_OPTIONAL)
    # `name` is the tool's id: MCP's tool-name alphabet is the one every catalog here uses.
    name = _tool_name(obj, where, c)
    schema = parse_input_schema(obj, where, c)
    output_schema = _output_schema(obj, where, c)
    annotations = _annotations(obj, where, c)
    matched = overlay_for(name, server_id, overlay)
    axes = axes_from_hints(annotations)
    descriptor = Descriptor(
        declared_id=name,
        plane=Plane.BUSINESS.value,
        module=matched.module,
        availability=Availability.PRODUCTION.value,
        mutating=axes.mutating,
        retry_class=axes.retry_class,
        idempotency=axes.idempotency,
        policy_domain=matched.policy_domain,
        hitl_tier=matched.hitl_tier,
        rag_description=c.string(obj, "description", where, max_length=DESCRIPTION_MAX),
        input_schema=schema,
        mcp={
            "server": server_id,
            "name": name,
            "title": c.string(obj, "title", where, nullable=True, max_length=NAME_MAX),
            "outputSchema": output_schema,
            "annotations": annotations,
        },
    )
    label_tool_problems(c, before, name)
    return descriptor


def _tool_name(obj: dict[str, Any], where: str, c: Checker) -> str:
    """MCP calls the id `name`; the shared id checks read `id`, so their problems are relabelled."""
    before = len(c.problems)
    name = parse_tool_id({"id": obj["name"]} if "name" in obj else {}, where, c)
    _relabel(c, before, f"{where}.id", f"{where}.name")
    return name


def _output_schema(obj: dict[str, Any], where: str, c: Checker) -> dict[str, Any] | None:
    """`outputSchema`: bounded like the input schema."""
    if obj.get("outputSchema") is None:
        return None
    before = len(c.problems)
    schema = parse_input_schema({"inputSchema": obj["outputSchema"]}, where, c)
    _relabel(c, before, f"{where}.inputSchema", f"{where}.outputSchema")
    return schema


def _relabel(c: Checker, before: int, old: str, new: str) -> None:
    for k in range(before, len(c.problems)):
        if c.problems[k].startswith(old + ":"):
            c.problems[k] = new + c.problems[k][len(old) :]


def _annotations(obj: dict[str, Any], where: str, c: Checker) -> dict[str, Any] | None:
    """`annotations` exactly as declared (None when absent); each hint a boolean, the title a string."""
    if obj.get("annotations") is None:
        return None
    ann = c.obj(obj["annotations"], f"{where}.annotations")
    if ann is None:
        return None
    awhere = f"{where}.annotations"
    c.keys(ann, awhere, (), ANNOTATION_KEYS)
    for key, value in ann.items():
        if key == "title":
            c.string(ann, "title", awhere, nullable=True, max_length=NAME_MAX)
        elif key in ANNOTATION_KEYS and not isinstance(value, bool):
            c.problem(f"{awhere}.{key}", f"expected true or false, got {type_name(value)}")
    if nesting_depth(ann) > 1 or len(str(ann)) > SCHEMA_BYTES_MAX:
        c.problem(awhere, "expected flat hints")
    return dict(ann)


DIALECT = Dialect(format=MCP_FORMAT, system="mcp", parse=parse_mcp)
