"""The declaration rules: what a tool's declared axes, ownership, ids and the catalog's lists must satisfy."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from catalog.domain.keys import canonical_key, llm_name
from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating
from catalog.domain.profiles import is_active
from catalog.domain.rules.base import Finding, LintCatalog, Severity, _each, _finding, rule
from catalog.domain.rules.mcp_reading import mutation_reason
from catalog.domain.vocabulary import Availability, Plane, PolicyClass, RetryClass, System

# --- errors ----------------------------------------------------------------------------------------


@rule("mutate-without-hitl", Severity.ERROR, "Mutation without a HITL tier", waivable=False)
def _mutate_without_hitl(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        effective = effective_policy_class(mutating=d.mutating, policy_class=d.policy_class)
        if effective == PolicyClass.MUTATE and not d.hitl_tier and d.mcp is not None:
            # An MCP tool mutates by its hints (MCP's defaults); its tier lives in the server's overlay.
            message, details = mutation_reason(d)
            yield _finding("mutate-without-hitl", d, message, effective_policy_class=effective, **details)
        elif effective == PolicyClass.MUTATE and not d.hitl_tier:
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
