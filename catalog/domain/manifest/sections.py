"""The top-level sections more than one dialect declares the same way (TOOLS.md, "Common rules"): source,
baselineCount, teams, ownership, profiles, forcedFloors, agents. Each parser appends to the manifest and
records every problem, located, in the checker."""

from __future__ import annotations

from typing import Any

from catalog.domain.checker import Checker
from catalog.domain.descriptor import Descriptor
from catalog.domain.manifest.base import (
    AGENTS_MAX,
    ESCALATION_MAX,
    FLOORS_MAX,
    ID_MAX,
    LIST_IN_SECTION_MAX,
    MAX_BASELINE_COUNT,
    NAME_MAX,
    OWNERSHIP_MAX,
    PROFILES_MAX,
    SLUG_CHARS,
    SLUG_MAX,
    TEAMS_MAX,
    Agent,
    ForcedFloor,
    Manifest,
    OwnershipRule,
    Profile,
    Team,
)
from catalog.domain.vocabulary import Availability, FloorTrigger, Plane


def parse_source(data: dict[str, Any], manifest: Manifest, c: Checker, *, required: bool) -> None:
    """`source`: the repository and commit the manifest was exported from (provenance on the revision)."""
    if "source" not in data:
        return
    source = c.obj(data["source"], "source")
    if source is None:
        return
    c.keys(source, "source", ("repository", "commit") if required else (), ("repository", "commit"))
    manifest.source_repository = c.string(source, "repository", "source", max_length=NAME_MAX)
    manifest.source_commit = c.string(source, "commit", "source", max_length=SLUG_MAX)


def parse_baseline(data: dict[str, Any], manifest: Manifest, c: Checker) -> None:
    """`baselineCount`: the audited live business-tool count, a whole number the column can store."""
    if "baselineCount" not in data or data["baselineCount"] is None:
        return
    value = data["baselineCount"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        c.problem("baselineCount", f"expected a whole number ≥ 0, got {value!r}")
        return
    if value > MAX_BASELINE_COUNT:  # the column's 32 bits: a larger count failed the insert (a 500)
        c.problem("baselineCount", f"expected at most {MAX_BASELINE_COUNT}, got {value}")
        return
    manifest.baseline_count = value


def parse_teams(data: dict[str, Any], manifest: Manifest, c: Checker) -> None:
    """`teams`: who owns tools, with their on-call contact and escalation; ids unique."""
    items = c.list(data.get("teams", []), "teams", max_items=TEAMS_MAX)
    fields = ("id", "name", "oncall", "channel", "escalation")
    for i, raw in enumerate(items):
        where = f"teams[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, fields, ())
        team_id = c.nonempty(obj, "id", where, max_length=SLUG_MAX, chars=SLUG_CHARS)
        manifest.teams.append(
            Team(
                id=team_id,
                name=c.nonempty(obj, "name", where, max_length=NAME_MAX),
                oncall=c.string(obj, "oncall", where, max_length=NAME_MAX),
                channel=c.string(obj, "channel", where, max_length=NAME_MAX),
                escalation=c.string(obj, "escalation", where, max_length=ESCALATION_MAX),
            )
        )
    c.unique(((f"teams[{i}].id", t.id) for i, t in enumerate(manifest.teams) if t.id), "team id")


def parse_ownership(data: dict[str, Any], manifest: Manifest, c: Checker, known_team_ids: set[str]) -> None:
    """`ownership`: (plane, module) → team rules, each naming a team stored or declared in this manifest.
    Call after `parse_teams`."""
    items = c.list(data.get("ownership", []), "ownership", max_items=OWNERSHIP_MAX)
    team_ids = known_team_ids | {t.id for t in manifest.teams}
    for i, raw in enumerate(items):
        where = f"ownership[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("plane", "module", "team"), ())
        plane = c.enum(obj, "plane", where, Plane)
        module = c.nonempty(obj, "module", where, max_length=SLUG_MAX)
        team = c.nonempty(obj, "team", where, max_length=SLUG_MAX)
        if team and team not in team_ids:
            c.problem(f"{where}.team", f"unknown team {team!r}; declare it under teams")
        manifest.ownership.append(OwnershipRule(plane=plane, module=module, team=team))
    c.unique(
        ((f"ownership[{i}]", f"{r.plane}/{r.module}") for i, r in enumerate(manifest.ownership)),
        "ownership rule for plane/module",
    )


def parse_profiles(data: dict[str, Any], manifest: Manifest, c: Checker, tools_by_id: dict[str, Descriptor]) -> None:
    """`profiles`: which availabilities each profile activates and which tools it includes; a clinical profile
    activates production tools only. Call after the tools are parsed (`tools_by_id`: the manifest's tools)."""
    for i, raw in enumerate(c.list(data.get("profiles", []), "profiles", max_items=PROFILES_MAX)):
        where = f"profiles[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("id", "clinical", "availability"), ("include",))
        profile_id = c.nonempty(obj, "id", where, max_length=SLUG_MAX, chars=SLUG_CHARS)
        clinical = c.boolean(obj, "clinical", where)
        availability = c.strings(obj.get("availability", []), f"{where}.availability", max_items=LIST_IN_SECTION_MAX)
        allowed = [a.value for a in Availability]
        for j, value in enumerate(availability):
            if value not in allowed:
                c.problem(
                    f"{where}.availability[{j}]", f"unknown value {value!r}; expected one of {', '.join(allowed)}"
                )
        include = c.strings(
            obj.get("include", []), f"{where}.include", max_items=LIST_IN_SECTION_MAX, max_length=ID_MAX
        )
        check_tool_refs(include, f"{where}.include", set(tools_by_id), c, "included tool")
        if clinical:
            _check_clinical_profile(profile_id, where, availability, include, tools_by_id, c)
        manifest.profiles.append(Profile(id=profile_id, clinical=clinical, availability=availability, include=include))
    c.unique(((f"profiles[{i}].id", p.id) for i, p in enumerate(manifest.profiles) if p.id), "profile id")


def _check_clinical_profile(
    profile_id: str,
    where: str,
    availability: list[str],
    include: list[str],
    tools_by_id: dict[str, Descriptor],
    c: Checker,
) -> None:
    """Only production tools may be active under a clinical profile: by availability or by explicit include."""
    if any(a != Availability.PRODUCTION for a in availability):
        c.problem(
            f"{where}.availability",
            f"a clinical profile activates production tools only (profile {profile_id})",
        )
    for j, tool_id in enumerate(include):
        tool = tools_by_id.get(tool_id)
        if tool is not None and tool.availability != Availability.PRODUCTION:
            c.problem(
                f"{where}.include[{j}]",
                f"clinical profile {profile_id!r} includes {tool.availability} tool {tool_id!r}; "
                "only production tools may be active under a clinical profile",
            )


def parse_forced_floors(data: dict[str, Any], manifest: Manifest, c: Checker, tool_ids: set[str]) -> None:
    """`forcedFloors`: tools forced into the candidate set on a trigger; each must be a tool of this manifest.
    Call after the tools are parsed."""
    for i, raw in enumerate(c.list(data.get("forcedFloors", []), "forcedFloors", max_items=FLOORS_MAX)):
        where = f"forcedFloors[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("id", "trigger", "tools"), ())
        tools = c.strings(obj.get("tools", []), f"{where}.tools", max_items=LIST_IN_SECTION_MAX, max_length=ID_MAX)
        check_tool_refs(tools, f"{where}.tools", tool_ids, c, "floor tool")
        manifest.forced_floors.append(
            ForcedFloor(
                id=c.nonempty(obj, "id", where, max_length=SLUG_MAX, chars=SLUG_CHARS),
                trigger=c.enum(obj, "trigger", where, FloorTrigger),
                tools=tools,
            )
        )
    c.unique(((f"forcedFloors[{i}].id", f.id) for i, f in enumerate(manifest.forced_floors) if f.id), "forced floor id")


def parse_agents(data: dict[str, Any], manifest: Manifest, c: Checker) -> None:
    """`agents`: each agent with the tool categories bound to it; ids unique."""
    for i, raw in enumerate(c.list(data.get("agents", []), "agents", max_items=AGENTS_MAX)):
        where = f"agents[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("id", "categories"), ())
        manifest.agents.append(
            Agent(
                id=c.nonempty(obj, "id", where, max_length=SLUG_MAX, chars=SLUG_CHARS),
                categories=c.strings(
                    obj.get("categories", []), f"{where}.categories", max_items=LIST_IN_SECTION_MAX, max_length=SLUG_MAX
                ),
            )
        )
    c.unique(((f"agents[{i}].id", a.id) for i, a in enumerate(manifest.agents) if a.id), "agent id")


def check_tool_refs(ids: list[str], where: str, tool_ids: set[str], c: Checker, what: str) -> None:
    """Every id in a section's list of tools names a tool this manifest declares."""
    for j, tool_id in enumerate(ids):
        if tool_id not in tool_ids:
            c.problem(f"{where}[{j}]", f"{what} {tool_id!r} is not a tool in this manifest")
