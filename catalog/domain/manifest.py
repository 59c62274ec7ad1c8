"""Parsing and validating catalog manifests (`condor-catalog/v1`, `tucan-tools/v1`).

`parse_manifest` never raises on bad content: it returns every problem it finds, each with its JSON
location, so the person fixing the source repository sees the whole list at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from catalog.domain.checker import Checker, type_name, unstorable_texts
from catalog.domain.colours import colour_literals
from catalog.domain.descriptor import Descriptor
from catalog.domain.keys import canonical_key
from catalog.domain.vocabulary import (
    Availability,
    FloorTrigger,
    HitlTier,
    Idempotency,
    Plane,
    PolicyClass,
    RetryClass,
    System,
)

CONDOR_FORMAT = "condor-catalog/v1"
TUCAN_FORMAT = "tucan-tools/v1"
FORMATS = {CONDOR_FORMAT: System.CONDOR, TUCAN_FORMAT: System.TUCAN}
MAX_BASELINE_COUNT = 2**31 - 1
# Column widths (catalog/models): a longer value failed the insert on PostgreSQL, a 500 (SQLite does not
# enforce them). tests/catalog/test_import_fuzz.py checks that they agree with the models.
ID_MAX = 200  # tool ids, and so their canonical keys and LLM names
NAME_MAX = 200  # team names, on-call handles and channels; the source repository
SLUG_MAX = 100  # team, profile, floor and agent ids; modules, categories, policy domains; the source commit
PATH_MAX = 300  # metadataRef, source


@dataclass(frozen=True)
class Team:
    id: str
    name: str
    oncall: str
    channel: str
    escalation: str


@dataclass(frozen=True)
class OwnershipRule:
    plane: str
    module: str
    team: str


@dataclass(frozen=True)
class Profile:
    id: str
    clinical: bool
    availability: list[str]
    include: list[str]


@dataclass(frozen=True)
class ForcedFloor:
    id: str
    trigger: str
    tools: list[str]


@dataclass(frozen=True)
class Agent:
    id: str
    categories: list[str]


@dataclass
class Manifest:
    system: str
    format: str
    sha256: str
    source_repository: str = ""
    source_commit: str = ""
    baseline_count: int | None = None
    teams: list[Team] = field(default_factory=list)
    ownership: list[OwnershipRule] = field(default_factory=list)
    profiles: list[Profile] = field(default_factory=list)
    forced_floors: list[ForcedFloor] = field(default_factory=list)
    agents: list[Agent] = field(default_factory=list)
    tools: list[Descriptor] = field(default_factory=list)


class ManifestError(Exception):
    """A manifest that cannot be imported; `problems` lists every located problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(f"{len(problems)} problem(s) in manifest: " + "; ".join(problems[:5]))


def manifest_sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def load_manifest(raw: bytes, *, known_team_ids: Iterable[str] = ()) -> Manifest:
    """Decode and validate a manifest; raise ManifestError with every problem found."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ManifestError([f"$: not UTF-8 ({exc.reason} at byte {exc.start})"]) from exc
    except json.JSONDecodeError as exc:
        raise ManifestError([f"$: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"]) from exc
    except RecursionError as exc:
        raise ManifestError(["$: arrays or objects nested too deeply to read; no manifest nests like that"]) from exc
    # Text no column can hold would fail deep inside the import (or only on PostgreSQL): refuse it here.
    unstorable = unstorable_texts(data)
    if unstorable:
        raise ManifestError(unstorable)
    return parse_manifest(data, sha256=manifest_sha256(raw), known_team_ids=known_team_ids)


def parse_manifest(data: Any, *, sha256: str = "", known_team_ids: Iterable[str] = ()) -> Manifest:
    checker = Checker()
    if not isinstance(data, dict):
        raise ManifestError([f"$: expected a JSON object, got {type_name(data)}"])
    fmt = data.get("format")
    if not isinstance(fmt, str) or fmt not in FORMATS:  # a list or object is not hashable: no `in` on it
        raise ManifestError([f"format: unknown manifest format {fmt!r}; expected one of {', '.join(sorted(FORMATS))}"])
    manifest = Manifest(system=FORMATS[fmt].value, format=fmt, sha256=sha256)
    if fmt == CONDOR_FORMAT:
        _parse_condor(data, manifest, checker, set(known_team_ids))
    else:
        _parse_tucan(data, manifest, checker, set(known_team_ids))
    if checker.problems:
        raise ManifestError(checker.problems)
    return manifest


# --- shared sections -------------------------------------------------------------------------------


def _parse_source(data: dict[str, Any], manifest: Manifest, c: Checker, *, required: bool) -> None:
    if "source" not in data:
        return
    source = c.obj(data["source"], "source")
    if source is None:
        return
    c.keys(source, "source", ("repository", "commit") if required else (), ("repository", "commit"))
    manifest.source_repository = c.string(source, "repository", "source", max_length=NAME_MAX)
    manifest.source_commit = c.string(source, "commit", "source", max_length=SLUG_MAX)


def _parse_baseline(data: dict[str, Any], manifest: Manifest, c: Checker) -> None:
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


def _parse_teams(data: dict[str, Any], manifest: Manifest, c: Checker) -> None:
    items = c.list(data.get("teams", []), "teams")
    fields = ("id", "name", "oncall", "channel", "escalation")
    for i, raw in enumerate(items):
        where = f"teams[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, fields, ())
        team_id = c.nonempty(obj, "id", where, max_length=SLUG_MAX)
        manifest.teams.append(
            Team(
                id=team_id,
                name=c.nonempty(obj, "name", where, max_length=NAME_MAX),
                oncall=c.string(obj, "oncall", where, max_length=NAME_MAX),
                channel=c.string(obj, "channel", where, max_length=NAME_MAX),
                escalation=c.string(obj, "escalation", where),
            )
        )
    c.unique(((f"teams[{i}].id", t.id) for i, t in enumerate(manifest.teams) if t.id), "team id")


def _parse_ownership(data: dict[str, Any], manifest: Manifest, c: Checker, known_team_ids: set[str]) -> None:
    items = c.list(data.get("ownership", []), "ownership")
    team_ids = known_team_ids | {t.id for t in manifest.teams}
    for i, raw in enumerate(items):
        where = f"ownership[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("plane", "module", "team"), ())
        plane = c.enum(obj, "plane", where, Plane)
        module = c.nonempty(obj, "module", where, max_length=SLUG_MAX)
        team = c.nonempty(obj, "team", where)
        if team and team not in team_ids:
            c.problem(f"{where}.team", f"unknown team {team!r}; declare it under teams")
        manifest.ownership.append(OwnershipRule(plane=plane, module=module, team=team))
    c.unique(
        ((f"ownership[{i}]", f"{r.plane}/{r.module}") for i, r in enumerate(manifest.ownership)),
        "ownership rule for plane/module",
    )


def _check_tool_refs(ids: list[str], where: str, tool_ids: set[str], c: Checker, what: str) -> None:
    for j, tool_id in enumerate(ids):
        if tool_id not in tool_ids:
            c.problem(f"{where}[{j}]", f"{what} {tool_id!r} is not a tool in this manifest")


# --- condor-catalog/v1 -----------------------------------------------------------------------------

_CONDOR_TOP = ("format", "source", "teams", "ownership", "profiles", "forcedFloors", "tools")
_CONDOR_TOOL_REQUIRED = ("id", "plane", "module", "availability", "mutating", "retryClass", "idempotency")
_CONDOR_TOOL_OPTIONAL = (
    "policyClass",
    "policyDomain",
    "hitlTier",
    "ragDescription",
    "ragKeywords",
    "instructionFragment",
    "stylingFragment",
    "outputInstructions",
    "outputContainsIds",
    "alwaysInclude",
    "metadataRef",
    "source",
    "aliases",
)


def _parse_condor(data: dict[str, Any], manifest: Manifest, c: Checker, known_team_ids: set[str]) -> None:
    c.keys(data, "", _CONDOR_TOP, ("baselineCount",))
    _parse_source(data, manifest, c, required=True)
    _parse_baseline(data, manifest, c)
    _parse_teams(data, manifest, c)
    _parse_ownership(data, manifest, c, known_team_ids)
    for i, raw in enumerate(c.list(data.get("tools", []), "tools")):
        descriptor = _parse_condor_tool(raw, f"tools[{i}]", c)
        if descriptor is not None:
            manifest.tools.append(descriptor)
    _check_tool_ids(manifest, c, fold_collisions=True)
    tools_by_id = {t.declared_id: t for t in manifest.tools}
    _parse_profiles(data, manifest, c, tools_by_id)
    _parse_floors(data, manifest, c, set(tools_by_id))


def _parse_condor_tool(raw: Any, where: str, c: Checker) -> Descriptor | None:
    obj = c.obj(raw, where)
    if obj is None:
        return None
    before = len(c.problems)
    c.keys(obj, where, _CONDOR_TOOL_REQUIRED, _CONDOR_TOOL_OPTIONAL)
    tool_id = _tool_id(obj, where, c)
    policy_class = c.enum(obj, "policyClass", where, PolicyClass, nullable=True)
    hitl_tier = c.enum(obj, "hitlTier", where, HitlTier, nullable=True)
    mutating = c.boolean(obj, "mutating", where)
    styling = c.string(obj, "stylingFragment", where, nullable=True)
    descriptor = Descriptor(
        declared_id=tool_id,
        plane=c.enum(obj, "plane", where, Plane),
        module=c.nonempty(obj, "module", where, max_length=SLUG_MAX),
        availability=c.enum(obj, "availability", where, Availability),
        mutating=mutating,
        retry_class=c.enum(obj, "retryClass", where, RetryClass, default=RetryClass.NONE.value),
        idempotency=c.enum(obj, "idempotency", where, Idempotency, default=Idempotency.NONE.value),
        policy_class=policy_class,
        policy_domain=c.string(obj, "policyDomain", where, nullable=True, max_length=SLUG_MAX),
        hitl_tier=hitl_tier,
        rag_description=c.string(obj, "ragDescription", where),
        rag_keywords=_parse_keyword_map(obj, where, c),
        instruction_fragment=c.string(obj, "instructionFragment", where, nullable=True),
        styling_fragment=styling,
        output_instructions=c.string(obj, "outputInstructions", where, nullable=True),
        output_contains_ids=c.boolean(obj, "outputContainsIds", where),
        always_include=c.boolean(obj, "alwaysInclude", where),
        metadata_ref=c.string(obj, "metadataRef", where, nullable=True, max_length=PATH_MAX),
        source_path=c.string(obj, "source", where, nullable=True, max_length=PATH_MAX),
        aliases=c.strings(obj.get("aliases", []), f"{where}.aliases"),
    )
    # The seed's compile-time rule: a mutate row without a tier does not type-check.
    if policy_class == PolicyClass.MUTATE and not hitl_tier:
        c.problem(f"{where}.hitlTier", "required when policyClass is mutate")
    # Declared `read` on a mutating tool reads as `read` at the suspend gate: an ungated mutation.
    if policy_class == PolicyClass.READ and mutating:
        c.problem(f"{where}.policyClass", "'read' contradicts mutating: true; declare 'mutate' with a hitlTier")
    if styling:
        literals = colour_literals(styling)
        if literals:
            c.problem(
                f"{where}.stylingFragment",
                f"raw colour literal {', '.join(repr(x) for x in literals)}; use a theme token or words",
            )
    _label(c, before, tool_id)
    return descriptor


def _tool_id(obj: dict[str, Any], where: str, c: Checker) -> str:
    tool_id = c.nonempty(obj, "id", where, max_length=ID_MAX)
    # The canonical key is stored too, and is longer than the id when camelCase humps become dots.
    if tool_id and len(tool_id) <= ID_MAX < len(canonical_key(tool_id)):
        c.problem(f"{where}.id", f"at most {ID_MAX} characters in canonical form, got {len(canonical_key(tool_id))}")
    return tool_id


def _label(c: Checker, before: int, tool_id: str) -> None:
    """Name the tool in every problem found inside it: a location alone is hard to find in 350 tools."""
    if not tool_id or len(tool_id) > ID_MAX:  # an overlong id is itself the problem: not repeated in each
        return
    label = f" (tool {tool_id})"
    for k in range(before, len(c.problems)):
        if not c.problems[k].endswith(label):
            c.problems[k] += label


def _parse_keyword_map(obj: dict[str, Any], where: str, c: Checker) -> dict[str, list[str]]:
    if "ragKeywords" not in obj or obj["ragKeywords"] is None:
        return {}
    value = c.obj(obj["ragKeywords"], f"{where}.ragKeywords")
    if value is None:
        return {}
    out: dict[str, list[str]] = {}
    for lang, words in value.items():
        out[lang] = c.strings(words, f"{where}.ragKeywords.{lang}")
    return out


def _check_tool_ids(manifest: Manifest, c: Checker, *, fold_collisions: bool) -> None:
    c.unique(((f"tools[{i}].id", t.declared_id) for i, t in enumerate(manifest.tools) if t.declared_id), "tool id")
    if not fold_collisions:
        return
    folded: list[tuple[str, str]] = []
    spellings: dict[str, str] = {}
    for i, tool in enumerate(manifest.tools):
        if not tool.declared_id:
            continue
        names = [(f"tools[{i}].id", tool.declared_id)]
        names += [(f"tools[{i}].aliases[{j}]", alias) for j, alias in enumerate(tool.aliases)]
        own: set[str] = set()
        for where, name in names:
            key = canonical_key(name)
            if key in own:
                continue  # an alias that folds to the tool's own key is merely redundant
            own.add(key)
            folded.append((where, key))
            spellings.setdefault(key, name)
    seen: dict[str, str] = {}
    for where, key in folded:
        if key in seen:
            c.problem(
                where,
                f"canonical key {key!r} collides with {seen[key]} ({spellings[key]!r}); "
                "two spellings of one key would route to one owner",
            )
        else:
            seen[key] = where


def _parse_profiles(data: dict[str, Any], manifest: Manifest, c: Checker, tools_by_id: dict[str, Descriptor]) -> None:
    for i, raw in enumerate(c.list(data.get("profiles", []), "profiles")):
        where = f"profiles[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("id", "clinical", "availability"), ("include",))
        profile_id = c.nonempty(obj, "id", where, max_length=SLUG_MAX)
        clinical = c.boolean(obj, "clinical", where)
        availability = c.strings(obj.get("availability", []), f"{where}.availability")
        allowed = [a.value for a in Availability]
        for j, value in enumerate(availability):
            if value not in allowed:
                c.problem(
                    f"{where}.availability[{j}]", f"unknown value {value!r}; expected one of {', '.join(allowed)}"
                )
        include = c.strings(obj.get("include", []), f"{where}.include")
        _check_tool_refs(include, f"{where}.include", set(tools_by_id), c, "included tool")
        if clinical:
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
        manifest.profiles.append(Profile(id=profile_id, clinical=clinical, availability=availability, include=include))
    c.unique(((f"profiles[{i}].id", p.id) for i, p in enumerate(manifest.profiles) if p.id), "profile id")


def _parse_floors(data: dict[str, Any], manifest: Manifest, c: Checker, tool_ids: set[str]) -> None:
    for i, raw in enumerate(c.list(data.get("forcedFloors", []), "forcedFloors")):
        where = f"forcedFloors[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("id", "trigger", "tools"), ())
        tools = c.strings(obj.get("tools", []), f"{where}.tools")
        _check_tool_refs(tools, f"{where}.tools", tool_ids, c, "floor tool")
        manifest.forced_floors.append(
            ForcedFloor(
                id=c.nonempty(obj, "id", where, max_length=SLUG_MAX),
                trigger=c.enum(obj, "trigger", where, FloorTrigger),
                tools=tools,
            )
        )
    c.unique(((f"forcedFloors[{i}].id", f.id) for i, f in enumerate(manifest.forced_floors) if f.id), "forced floor id")


# --- tucan-tools/v1 --------------------------------------------------------------------------------

_TUCAN_TOP_REQUIRED = ("format", "agents", "tools")
_TUCAN_TOP_OPTIONAL = ("source", "baselineCount", "teams", "ownership")
_TUCAN_TOOL_KEYS = ("id", "description", "category", "inputSchema", "metadata")
_TUCAN_META_REQUIRED = ("mutating",)
_TUCAN_META_OPTIONAL = ("ragDescription", "ragKeywords", "alwaysInclude", "outputInstructions", "outputContainsIds")

# TUCAN gives one flat keyword list; the findings detect each keyword's language later.
UNDETERMINED_LANGUAGE = "und"


def _parse_tucan(data: dict[str, Any], manifest: Manifest, c: Checker, known_team_ids: set[str]) -> None:
    c.keys(data, "", _TUCAN_TOP_REQUIRED, _TUCAN_TOP_OPTIONAL)
    _parse_source(data, manifest, c, required=False)
    _parse_baseline(data, manifest, c)
    _parse_teams(data, manifest, c)
    _parse_ownership(data, manifest, c, known_team_ids)
    for i, raw in enumerate(c.list(data.get("agents", []), "agents")):
        where = f"agents[{i}]"
        obj = c.obj(raw, where)
        if obj is None:
            continue
        c.keys(obj, where, ("id", "categories"), ())
        manifest.agents.append(
            Agent(
                id=c.nonempty(obj, "id", where, max_length=SLUG_MAX),
                categories=c.strings(obj.get("categories", []), f"{where}.categories"),
            )
        )
    c.unique(((f"agents[{i}].id", a.id) for i, a in enumerate(manifest.agents) if a.id), "agent id")
    for i, raw in enumerate(c.list(data.get("tools", []), "tools")):
        descriptor = _parse_tucan_tool(raw, f"tools[{i}]", c)
        if descriptor is not None:
            manifest.tools.append(descriptor)
    # TUCAN allows ids that fold together (show-modal vs show_modal): findings flag them, import does not.
    _check_tool_ids(manifest, c, fold_collisions=False)


def _parse_tucan_tool(raw: Any, where: str, c: Checker) -> Descriptor | None:
    obj = c.obj(raw, where)
    if obj is None:
        return None
    before = len(c.problems)
    c.keys(obj, where, _TUCAN_TOOL_KEYS, ())
    tool_id = _tool_id(obj, where, c)
    category = c.nonempty(obj, "category", where, max_length=SLUG_MAX)
    schema: dict[str, Any] | None = None
    if "inputSchema" in obj:
        schema = c.obj(obj["inputSchema"], f"{where}.inputSchema")
    meta = c.obj(obj.get("metadata", {}), f"{where}.metadata") or {}
    mwhere = f"{where}.metadata"
    c.keys(meta, mwhere, _TUCAN_META_REQUIRED, _TUCAN_META_OPTIONAL)
    keywords: dict[str, list[str]] = {}
    if meta.get("ragKeywords") is not None:
        flat = c.strings(meta["ragKeywords"], f"{mwhere}.ragKeywords")
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
        description=c.string(obj, "description", where),
        rag_description=c.string(meta, "ragDescription", mwhere),
        rag_keywords=keywords,
        output_instructions=c.string(meta, "outputInstructions", mwhere, nullable=True),
        output_contains_ids=c.boolean(meta, "outputContainsIds", mwhere),
        always_include=c.boolean(meta, "alwaysInclude", mwhere),
        input_schema=schema,
    )
    _label(c, before, tool_id)
    return descriptor
