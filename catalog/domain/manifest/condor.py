"""The `condor-catalog/v1` dialect (TOOLS.md): descriptors with every axis declared, plus teams, ownership,
profiles and forced floors. Canonical-key collisions between ids and aliases are refused here."""

from __future__ import annotations

from typing import Any

from catalog.domain.checker import Checker
from catalog.domain.colours import colour_literals
from catalog.domain.descriptor import Descriptor
from catalog.domain.manifest.base import (
    DESCRIPTION_MAX,
    FRAGMENT_MAX,
    KEYWORD_LANGUAGES_MAX,
    KEYWORD_MAX,
    KEYWORDS_MAX,
    LANGUAGE_CODE_MAX,
    PATH_MAX,
    SLUG_CHARS,
    SLUG_MAX,
    TOOLS_MAX,
    Dialect,
    Manifest,
)
from catalog.domain.manifest.sections import (
    parse_baseline,
    parse_forced_floors,
    parse_ownership,
    parse_profiles,
    parse_source,
    parse_teams,
)
from catalog.domain.manifest.tools import check_tool_ids, label_tool_problems, parse_aliases, parse_tool_id
from catalog.domain.vocabulary import Availability, HitlTier, Idempotency, Plane, PolicyClass, RetryClass, System

CONDOR_FORMAT = "condor-catalog/v1"

_TOP = ("format", "source", "teams", "ownership", "profiles", "forcedFloors", "tools")
_TOOL_REQUIRED = ("id", "plane", "module", "availability", "mutating", "retryClass", "idempotency")
_TOOL_OPTIONAL = (
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


def parse_condor(data: dict[str, Any], manifest: Manifest, c: Checker, known_team_ids: set[str]) -> None:
    """The whole document, section by section; profiles and floors last, as they name the tools."""
    c.keys(data, "", _TOP, ("baselineCount",))
    parse_source(data, manifest, c, required=True)
    parse_baseline(data, manifest, c)
    parse_teams(data, manifest, c)
    parse_ownership(data, manifest, c, known_team_ids)
    for i, raw in enumerate(c.list(data.get("tools", []), "tools", max_items=TOOLS_MAX)):
        descriptor = _parse_tool(raw, f"tools[{i}]", c)
        if descriptor is not None:
            manifest.tools.append(descriptor)
    check_tool_ids(manifest, c, fold_collisions=True)
    tools_by_id = {t.declared_id: t for t in manifest.tools}
    parse_profiles(data, manifest, c, tools_by_id)
    parse_forced_floors(data, manifest, c, set(tools_by_id))


def _parse_tool(raw: Any, where: str, c: Checker) -> Descriptor | None:
    """One descriptor, with the seed's rules that hold between its axes."""
    obj = c.obj(raw, where)
    if obj is None:
        return None
    before = len(c.problems)
    c.keys(obj, where, _TOOL_REQUIRED, _TOOL_OPTIONAL)
    tool_id = parse_tool_id(obj, where, c)
    policy_class = c.enum(obj, "policyClass", where, PolicyClass, nullable=True)
    hitl_tier = c.enum(obj, "hitlTier", where, HitlTier, nullable=True)
    mutating = c.boolean(obj, "mutating", where)
    styling = c.string(obj, "stylingFragment", where, nullable=True, max_length=FRAGMENT_MAX)
    descriptor = Descriptor(
        declared_id=tool_id,
        plane=c.enum(obj, "plane", where, Plane),
        module=c.nonempty(obj, "module", where, max_length=SLUG_MAX, chars=SLUG_CHARS),
        availability=c.enum(obj, "availability", where, Availability),
        mutating=mutating,
        retry_class=c.enum(obj, "retryClass", where, RetryClass, default=RetryClass.NONE.value),
        idempotency=c.enum(obj, "idempotency", where, Idempotency, default=Idempotency.NONE.value),
        policy_class=policy_class,
        policy_domain=c.string(obj, "policyDomain", where, nullable=True, max_length=SLUG_MAX, chars=SLUG_CHARS),
        hitl_tier=hitl_tier,
        rag_description=c.string(obj, "ragDescription", where, max_length=DESCRIPTION_MAX),
        rag_keywords=_parse_keyword_map(obj, where, c),
        instruction_fragment=c.string(obj, "instructionFragment", where, nullable=True, max_length=FRAGMENT_MAX),
        styling_fragment=styling,
        output_instructions=c.string(obj, "outputInstructions", where, nullable=True, max_length=FRAGMENT_MAX),
        output_contains_ids=c.boolean(obj, "outputContainsIds", where),
        always_include=c.boolean(obj, "alwaysInclude", where),
        metadata_ref=c.string(obj, "metadataRef", where, nullable=True, max_length=PATH_MAX),
        source_path=c.string(obj, "source", where, nullable=True, max_length=PATH_MAX),
        aliases=parse_aliases(obj, where, c),
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
    label_tool_problems(c, before, tool_id)
    return descriptor


def _parse_keyword_map(obj: dict[str, Any], where: str, c: Checker) -> dict[str, list[str]]:
    """`ragKeywords`: a list of keywords per language code."""
    if "ragKeywords" not in obj or obj["ragKeywords"] is None:
        return {}
    value = c.obj(obj["ragKeywords"], f"{where}.ragKeywords")
    if value is None:
        return {}
    if len(value) > KEYWORD_LANGUAGES_MAX:
        c.problem(f"{where}.ragKeywords", f"at most {KEYWORD_LANGUAGES_MAX} languages, got {len(value)}")
        return {}
    out: dict[str, list[str]] = {}
    for lang, words in value.items():
        here = f"{where}.ragKeywords.{lang}"
        if len(lang) > LANGUAGE_CODE_MAX:
            c.problem(
                f"{where}.ragKeywords", f"a language code is at most {LANGUAGE_CODE_MAX} characters, got {len(lang)}"
            )
            continue
        out[lang] = c.strings(words, here, max_items=KEYWORDS_MAX, max_length=KEYWORD_MAX)
    return out


DIALECT = Dialect(format=CONDOR_FORMAT, system=System.CONDOR.value, parse=parse_condor)
