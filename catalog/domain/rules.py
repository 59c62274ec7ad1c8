"""The safety rules: each a small pure function over a plain view of one system's catalog.

A rule has an id, a severity, whether a safety officer may waive it, and a check that yields findings
whose message says what is wrong and what to do. New rules (e.g. sibling near-duplicates from
embeddings) register themselves with `@rule(...)`; `lint` runs every registered rule.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from catalog.domain.budget import (
    FRAGMENT_MAX_BYTES,
    MANIFEST_MAX_BYTES,
    MANIFEST_MIN_BYTES,
    manifest_line_of,
    truncate_bytes,
    utf8_len,
)
from catalog.domain.colours import colour_literals
from catalog.domain.descriptor import Descriptor
from catalog.domain.keys import canonical_key, llm_name
from catalog.domain.language import classify_keywords
from catalog.domain.manifest import UNDETERMINED_LANGUAGE, Agent, ForcedFloor, Profile
from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating
from catalog.domain.profiles import is_active
from catalog.domain.vocabulary import Availability, Plane, PolicyClass, RetryClass, System


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class LintTool:
    descriptor: Descriptor
    owner: str | None  # the derived owning team's id, None when unowned


@dataclass(frozen=True)
class LintCatalog:
    """One system's live catalog as plain values: what every rule reads."""

    system: str
    tools: list[LintTool]
    profiles: list[Profile] = field(default_factory=list)
    forced_floors: list[ForcedFloor] = field(default_factory=list)
    agents: list[Agent] = field(default_factory=list)
    baseline_count: int | None = None
    # (a, b, cosine) of tools whose embedded texts are near-duplicates (catalog.rag.domain.siblings computes them
    # from stored vectors; empty until the worker has embedded the catalog).
    sibling_pairs: list[tuple[str, str, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    tool_id: str | None  # None for catalog-wide findings (count-drift)
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    title: str
    waivable: bool
    check: Callable[[LintCatalog], Iterable[Finding]]


RULES: dict[str, Rule] = {}


def rule(rule_id: str, severity: Severity, title: str, *, waivable: bool = True) -> Callable[..., Any]:
    """Register a check. The id is what waivers, the API and `lint_catalog` name."""

    def register(check: Callable[[LintCatalog], Iterable[Finding]]) -> Callable[[LintCatalog], Iterable[Finding]]:
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id!r} registered twice")
        RULES[rule_id] = Rule(rule_id, severity, title, waivable, check)
        return check

    return register


def lint(catalog: LintCatalog, *, only: Iterable[str] | None = None) -> list[Finding]:
    """Every finding of every registered rule (or of `only`), errors first, then by rule and tool."""
    selected = [RULES[r] for r in only] if only is not None else list(RULES.values())
    findings = [f for r in selected for f in r.check(catalog)]
    order = {Severity.ERROR.value: 0, Severity.WARNING.value: 1}
    return sorted(findings, key=lambda f: (order[f.severity], f.rule, f.tool_id or ""))


def _finding(r: str, tool: Descriptor | None, message: str, **details: Any) -> Finding:
    spec = RULES[r]
    return Finding(r, spec.severity.value, tool.declared_id if tool else None, message, details)


def _each(catalog: LintCatalog) -> Iterator[tuple[Descriptor, str | None]]:
    for t in catalog.tools:
        yield t.descriptor, t.owner


# --- errors ----------------------------------------------------------------------------------------


@rule("mutate-without-hitl", Severity.ERROR, "Mutation without a HITL tier", waivable=False)
def _mutate_without_hitl(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        effective = effective_policy_class(mutating=d.mutating, policy_class=d.policy_class)
        if effective == PolicyClass.MUTATE and not d.hitl_tier:
            source = "declared" if d.policy_class else "from the mutating fallback"
            yield _finding(
                "mutate-without-hitl",
                d,
                f"effective policy class is mutate ({source}) but no hitlTier is declared: an ungated mutation. "
                "Declare hitlTier 'high' (always suspends) or 'low' (operator chat allows).",
                effective_policy_class=effective,
                declared_policy_class=d.policy_class,
            )


@rule(
    "non-production-in-clinical", Severity.ERROR, "Non-production tool active under a clinical profile", waivable=False
)
def _non_production_in_clinical(catalog: LintCatalog) -> Iterator[Finding]:
    clinical = [p for p in catalog.profiles if p.clinical]
    for d, _ in _each(catalog):
        if d.availability == Availability.PRODUCTION:
            continue
        for p in clinical:
            if is_active(
                availability=d.availability,
                declared_id=d.declared_id,
                profile_availabilities=p.availability,
                profile_includes=p.include,
            ):
                yield _finding(
                    "non-production-in-clinical",
                    d,
                    f"{d.availability} tool is active under clinical profile {p.id!r}: boot fails under it. "
                    "Remove it from the profile or promote the tool to production.",
                    profile=p.id,
                    availability=d.availability,
                )


@rule("unowned", Severity.ERROR, "No owning team")
def _unowned(catalog: LintCatalog) -> Iterator[Finding]:
    for d, owner in _each(catalog):
        if owner is None:
            yield _finding(
                "unowned",
                d,
                f"no ownership rule matches plane {d.plane!r}, module {d.module!r}: on-call cannot be paged. "
                f"Add an ownership rule for ({d.plane}, {d.module}) or ({d.plane}, *).",
                plane=d.plane,
                module=d.module,
            )


@rule("key-collision", Severity.ERROR, "Tool ids that collide when normalized")
def _key_collision(catalog: LintCatalog) -> Iterator[Finding]:
    by_key: dict[str, list[str]] = defaultdict(list)
    by_llm: dict[str, list[str]] = defaultdict(list)
    tools = {d.declared_id: d for d, _ in _each(catalog)}
    for tool_id in tools:
        by_key[canonical_key(tool_id)].append(tool_id)
        by_llm[llm_name(tool_id)].append(tool_id)
    for tool_id, d in tools.items():
        others = [o for o in by_key[canonical_key(tool_id)] if o != tool_id]
        if not others:
            continue
        llm_clash = [o for o in by_llm[llm_name(tool_id)] if o != tool_id]
        if llm_clash and "-" not in tool_id:
            message = (
                f"id is not hyphenated and the LLM sees it as {llm_name(tool_id)!r}, exactly the exposure of "
                f"{', '.join(repr(o) for o in llm_clash)}: dispatch is ambiguous. Rename it with hyphens."
            )
        else:
            message = (
                f"folds to canonical key {canonical_key(tool_id)!r} like {', '.join(repr(o) for o in others)}: "
                "owner lookup and RAG provenance cannot tell them apart. Rename one of them."
            )
        yield _finding(
            "key-collision", d, message, canonical_key=canonical_key(tool_id), others=others, llm_clash=llm_clash
        )


@rule("control-plane-candidate", Severity.ERROR, "Control-plane tool listed as a business candidate")
def _control_plane_candidate(catalog: LintCatalog) -> Iterator[Finding]:
    places: dict[str, list[str]] = defaultdict(list)
    for f in catalog.forced_floors:
        for tool_id in f.tools:
            places[tool_id].append(f"forced floor {f.id!r}")
    for p in catalog.profiles:
        for tool_id in p.include:
            places[tool_id].append(f"profile {p.id!r} include")
    control_modules: dict[str, list[str]] = defaultdict(list)
    for d, _ in _each(catalog):
        if d.plane != Plane.BUSINESS:
            control_modules[d.module].append(d.declared_id)
    for a in catalog.agents:
        for category in a.categories:
            for tool_id in control_modules.get(category, []):
                places[tool_id].append(f"agent {a.id!r} binding")
    for d, _ in _each(catalog):
        if d.plane != Plane.BUSINESS and places.get(d.declared_id):
            where = ", ".join(places[d.declared_id])
            yield _finding(
                "control-plane-candidate",
                d,
                f"{d.plane} tool is listed in {where} as if it were a business tool; control-plane tools are never "
                "business candidates. Remove it from there.",
                plane=d.plane,
                places=places[d.declared_id],
            )


@rule("styling-colour-literal", Severity.ERROR, "Raw colour literal in a styling fragment")
def _styling_colour_literal(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        literals = colour_literals(d.styling_fragment or "")
        if literals:
            yield _finding(
                "styling-colour-literal",
                d,
                f"stylingFragment carries raw colour literal(s) {', '.join(repr(x) for x in literals)}; "
                "use the card's theme tokens or plain words.",
                literals=literals,
            )


# --- warnings --------------------------------------------------------------------------------------


@rule("retry-declared-on-mutating", Severity.WARNING, "Retry declared on a mutating tool")
def _retry_declared_on_mutating(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        mutates = is_mutating(mutating=d.mutating, policy_class=d.policy_class)
        if mutates and d.retry_class != RetryClass.NONE:
            effective = effective_retry_class(
                mutating=d.mutating, policy_class=d.policy_class, retry_class=d.retry_class
            )
            yield _finding(
                "retry-declared-on-mutating",
                d,
                f"retryClass declares {d.retry_class!r} but the tool mutates, so the effective retry class is "
                f"{effective!r} (a timed-out write that landed must not run twice). Declare retryClass 'none'.",
                declared=d.retry_class,
                effective=effective,
            )


@rule("policy-class-fallback", Severity.WARNING, "Mutating tool without a declared policy class")
def _policy_class_fallback(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        # TUCAN's createTucanTool has no policyClass to declare: its ungated mutations are errors above.
        if catalog.system == System.CONDOR and d.mutating and not d.policy_class:
            yield _finding(
                "policy-class-fallback",
                d,
                "mutating: true with no declared policyClass: its class 'mutate' comes from the factory's fallback "
                "stamping, not the declaration. Declare policyClass 'mutate'.",
                effective_policy_class=PolicyClass.MUTATE.value,
            )


RAG_SHAPE = ("USE WHEN:", "DO NOT USE WHEN:", "REQUIRES:", "PRODUCES:")


def rag_shape_problem(text: str) -> str | None:
    """None when `text` has the four-line USE WHEN / DO NOT USE WHEN / REQUIRES / PRODUCES shape."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return "ragDescription is missing"
    if len(lines) != len(RAG_SHAPE):
        return f"ragDescription has {len(lines)} line(s), not the four-line shape"
    for line, prefix in zip(lines, RAG_SHAPE, strict=True):
        if not line.upper().startswith(prefix) or not line[len(prefix) :].strip():
            return f"line {line[:30]!r} should start with {prefix!r} and say something after it"
    return None


@rule("rag-description-shape", Severity.WARNING, "ragDescription not in the four-line shape")
def _rag_description_shape(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        problem = rag_shape_problem(d.rag_description)
        if problem:
            yield _finding(
                "rag-description-shape",
                d,
                f"{problem}. Write four lines: USE WHEN / DO NOT USE WHEN / REQUIRES / PRODUCES (tool-RAG matches "
                "on it; a tool it never retrieves can never be selected).",
                problem=problem,
            )


REQUIRED_KEYWORD_LANGUAGES = ("en", "de")


@rule("rag-keywords-languages", Severity.WARNING, "ragKeywords lack English or German")
def _rag_keywords_languages(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        keywords = d.rag_keywords or {}
        detected = UNDETERMINED_LANGUAGE in keywords
        if detected:
            # TUCAN's flat list: detect each keyword's language and show the classification.
            by_language = classify_keywords(keywords[UNDETERMINED_LANGUAGE])
        else:
            by_language = {lang: list(words) for lang, words in keywords.items()}
        missing = [lang for lang in REQUIRED_KEYWORD_LANGUAGES if not by_language.get(lang)]
        if missing:
            how = " (languages detected per keyword)" if detected else ""
            yield _finding(
                "rag-keywords-languages",
                d,
                f"ragKeywords have no {' and no '.join(missing)} keyword{how}: the clinic is German-first and "
                "the embedding space must match the operator's language. Add them.",
                missing=missing,
                detected=detected,
                keywords=by_language,
            )


# "NEVER show UUIDs", "do not display UUIDs", "no UUIDs": a negation before the word UUID in one clause.
_FORBIDS_UUIDS = re.compile(r"\b(never|not|don't|no)\b[^.;]*\buuids?\b", re.IGNORECASE)


@rule("uuid-output-instruction", Severity.WARNING, "Output with ids does not forbid showing UUIDs")
def _uuid_output_instruction(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if d.output_contains_ids and not _FORBIDS_UUIDS.search(d.output_instructions or ""):
            yield _finding(
                "uuid-output-instruction",
                d,
                "outputContainsIds is true but outputInstructions do not forbid showing UUIDs. "
                "Add 'NEVER show UUIDs' (the review checklist's rule).",
                output_instructions=d.output_instructions,
            )


@rule("fragment-over-budget", Severity.WARNING, "Fragment over its byte budget")
def _fragment_over_budget(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        for name, text in (("instructionFragment", d.instruction_fragment), ("stylingFragment", d.styling_fragment)):
            if text and utf8_len(text) > FRAGMENT_MAX_BYTES:
                truncated = truncate_bytes(text, FRAGMENT_MAX_BYTES)
                yield _finding(
                    "fragment-over-budget",
                    d,
                    f"{name} is {utf8_len(text)} UTF-8 bytes, over the {FRAGMENT_MAX_BYTES}-byte budget; it will be "
                    f"truncated to {truncated!r}. Shorten it.",
                    field=name,
                    bytes=utf8_len(text),
                    truncated=truncated,
                )


@rule("manifest-line-bounds", Severity.WARNING, "Candidate manifest line out of bounds")
def _manifest_line_bounds(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if d.plane != Plane.BUSINESS:
            continue  # only business tools are ever candidates
        line = manifest_line_of(d)
        if not line.within_bounds:
            verdict = (
                f"too short to be told apart (minimum {MANIFEST_MIN_BYTES})"
                if line.natural_bytes < MANIFEST_MIN_BYTES
                else f"over the {MANIFEST_MAX_BYTES}-byte budget and will be truncated"
            )
            yield _finding(
                "manifest-line-bounds",
                d,
                f"candidate manifest line is {line.natural_bytes} bytes, {verdict}. "
                "Adjust the USE WHEN line or the instructionFragment.",
                bytes=line.natural_bytes,
                line=line.text,
            )


@rule("count-drift", Severity.WARNING, "Live tool count differs from the audited baseline")
def _count_drift(catalog: LintCatalog) -> Iterator[Finding]:
    if catalog.baseline_count is None:
        return
    live = sum(1 for d, _ in _each(catalog) if d.plane == Plane.BUSINESS)
    if live != catalog.baseline_count:
        yield _finding(
            "count-drift",
            None,
            f"{catalog.system} has {live} live business tools but the manifest's audited baseline says "
            f"{catalog.baseline_count}: update the direction audit's baseline or find the tool that came or went.",
            live=live,
            baseline=catalog.baseline_count,
        )


@rule("sibling-near-duplicate", Severity.WARNING, "Tool-RAG cannot tell two sibling tools apart")
def _sibling_near_duplicate(catalog: LintCatalog) -> Iterator[Finding]:
    # Seed: "ragKeywords must distinguish siblings. Identical ragDescription + ragKeywords produces identical
    # embeddings" — retrieval then picks between them by chance.
    by_id = {d.declared_id: d for d, _ in _each(catalog)}
    for a, b, cosine in catalog.sibling_pairs:
        for this, other in ((a, b), (b, a)):
            if this in by_id:
                yield _finding(
                    "sibling-near-duplicate",
                    by_id[this],
                    f"{this}'s embedded ragDescription + ragKeywords are a near-duplicate of {other}'s "
                    f"(cosine {cosine:.3f}): tool-RAG cannot tell them apart. Add anti-synonyms "
                    f'("DO NOT USE WHEN: …use {other}") or keywords only this tool owns, or a distinguishing '
                    "suffix in the description.",
                    other=other,
                    cosine=cosine,
                )


# The seed's two hard rules: no waiver may ever silence them (the database refuses one too).
UNWAIVABLE_RULES: tuple[str, ...] = tuple(r.id for r in RULES.values() if not r.waivable)
