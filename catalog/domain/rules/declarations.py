"""The declaration rules: what a tool's declared axes, ownership, ids and the catalog's lists must satisfy."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from catalog.domain.keys import canonical_key, llm_name
from catalog.domain.messages import N_, Message
from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating
from catalog.domain.profiles import is_active
from catalog.domain.rules.base import Finding, LintCatalog, Severity, _each, _finding, rule
from catalog.domain.rules.mcp_reading import mutation_reason
from catalog.domain.vocabulary import Availability, Plane, PolicyClass, RetryClass, System

# --- errors ----------------------------------------------------------------------------------------


@rule("mutate-without-hitl", Severity.ERROR, N_("Mutation without a HITL tier"), waivable=False, local=True)
def _mutate_without_hitl(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        effective = effective_policy_class(mutating=d.mutating, policy_class=d.policy_class)
        if effective == PolicyClass.MUTATE and not d.hitl_tier and d.mcp is not None:
            # An MCP tool mutates by its hints (MCP's defaults); its tier lives in the server's overlay.
            message, details = mutation_reason(d)
            yield _finding("mutate-without-hitl", d, message, effective_policy_class=effective, **details)
        elif effective == PolicyClass.MUTATE and not d.hitl_tier:
            source = Message(N_("declared") if d.policy_class else N_("from the mutating fallback"))
            yield _finding(
                "mutate-without-hitl",
                d,
                Message(
                    N_(
                        "effective policy class is mutate (%(source)s) but no hitlTier is declared: an ungated "
                        "mutation. Declare hitlTier 'high' (always suspends) or 'low' (operator chat allows)."
                    ),
                    {"source": source},
                ),
                effective_policy_class=effective,
                declared_policy_class=d.policy_class,
            )


@rule(
    "non-production-in-clinical",
    Severity.ERROR,
    N_("Non-production tool active under a clinical profile"),
    waivable=False,
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
                    Message(
                        N_(
                            "%(availability)s tool is active under clinical profile %(profile)s: boot fails under "
                            "it. Remove it from the profile or promote the tool to production."
                        ),
                        {"availability": d.availability, "profile": repr(p.id)},
                    ),
                    profile=p.id,
                    availability=d.availability,
                )


@rule("unowned", Severity.ERROR, N_("No owning team"), local=True)
def _unowned(catalog: LintCatalog) -> Iterator[Finding]:
    for d, owner in _each(catalog):
        if owner is None:
            yield _finding(
                "unowned",
                d,
                Message(
                    N_(
                        "no ownership rule matches plane %(plane_repr)s, module %(module_repr)s: on-call cannot be "
                        "paged. Add an ownership rule for (%(plane)s, %(module)s) or (%(plane)s, *)."
                    ),
                    {"plane_repr": repr(d.plane), "module_repr": repr(d.module), "plane": d.plane, "module": d.module},
                ),
                plane=d.plane,
                module=d.module,
            )


@rule("key-collision", Severity.ERROR, N_("Tool ids that collide when normalized"))
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
            message = Message(
                N_(
                    "id is not hyphenated and the LLM sees it as %(llm_name)s, exactly the exposure of %(others)s: "
                    "dispatch is ambiguous. Rename it with hyphens."
                ),
                {"llm_name": repr(llm_name(tool_id)), "others": ", ".join(repr(o) for o in llm_clash)},
            )
        else:
            message = Message(
                N_(
                    "folds to canonical key %(key)s like %(others)s: owner lookup and RAG provenance cannot tell "
                    "them apart. Rename one of them."
                ),
                {"key": repr(canonical_key(tool_id)), "others": ", ".join(repr(o) for o in others)},
            )
        yield _finding(
            "key-collision", d, message, canonical_key=canonical_key(tool_id), others=others, llm_clash=llm_clash
        )


@rule("control-plane-candidate", Severity.ERROR, N_("Control-plane tool listed as a business candidate"))
def _control_plane_candidate(catalog: LintCatalog) -> Iterator[Finding]:
    places: dict[str, list[Message]] = defaultdict(list)
    for f in catalog.forced_floors:
        for tool_id in f.tools:
            places[tool_id].append(Message(N_("forced floor %(id)s"), {"id": repr(f.id)}))
    for p in catalog.profiles:
        for tool_id in p.include:
            places[tool_id].append(Message(N_("profile %(id)s include"), {"id": repr(p.id)}))
    control_modules: dict[str, list[str]] = defaultdict(list)
    for d, _ in _each(catalog):
        if d.plane != Plane.BUSINESS:
            control_modules[d.module].append(d.declared_id)
    for a in catalog.agents:
        for category in a.categories:
            for tool_id in control_modules.get(category, []):
                places[tool_id].append(Message(N_("agent %(id)s binding"), {"id": repr(a.id)}))
    for d, _ in _each(catalog):
        if d.plane != Plane.BUSINESS and places.get(d.declared_id):
            where = places[d.declared_id]
            yield _finding(
                "control-plane-candidate",
                d,
                Message(
                    N_(
                        "%(plane)s tool is listed in %(where)s as if it were a business tool; control-plane tools "
                        "are never business candidates. Remove it from there."
                    ),
                    {"plane": d.plane, "where": _joined(where)},
                ),
                plane=d.plane,
                places=[str(m) for m in where],
            )


def _joined(parts: list[Message]) -> Message:
    """Messages joined by commas, each translated on its own."""
    names = {f"p{i}": m for i, m in enumerate(parts)}
    return Message(", ".join(f"%({n})s" for n in names), names)


# --- warnings --------------------------------------------------------------------------------------


@rule("retry-declared-on-mutating", Severity.WARNING, N_("Retry declared on a mutating tool"), local=True)
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
                Message(
                    N_(
                        "retryClass declares %(declared)s but the tool mutates, so the effective retry class is "
                        "%(effective)s (a timed-out write that landed must not run twice). Declare retryClass 'none'."
                    ),
                    {"declared": repr(d.retry_class), "effective": repr(effective)},
                ),
                declared=d.retry_class,
                effective=effective,
            )


@rule("policy-class-fallback", Severity.WARNING, N_("Mutating tool without a declared policy class"), local=True)
def _policy_class_fallback(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        # TUCAN's createTucanTool has no policyClass to declare: its ungated mutations are errors above.
        if catalog.system == System.CONDOR and d.mutating and not d.policy_class:
            yield _finding(
                "policy-class-fallback",
                d,
                Message(
                    N_(
                        "mutating: true with no declared policyClass: its class 'mutate' comes from the factory's "
                        "fallback stamping, not the declaration. Declare policyClass 'mutate'."
                    )
                ),
                effective_policy_class=PolicyClass.MUTATE.value,
            )


@rule("count-drift", Severity.WARNING, N_("Live tool count differs from the audited baseline"))
def _count_drift(catalog: LintCatalog) -> Iterator[Finding]:
    if catalog.baseline_count is None:
        return
    live = sum(1 for d, _ in _each(catalog) if d.plane == Plane.BUSINESS)
    if live != catalog.baseline_count:
        yield _finding(
            "count-drift",
            None,
            Message(
                N_(
                    "%(system)s has %(live)s live business tools but the manifest's audited baseline says "
                    "%(baseline)s: update the direction audit's baseline or find the tool that came or went."
                ),
                {"system": catalog.system, "live": live, "baseline": catalog.baseline_count},
            ),
            live=live,
            baseline=catalog.baseline_count,
        )


@rule("sibling-near-duplicate", Severity.WARNING, N_("Tool-RAG cannot tell two sibling tools apart"))
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
                    Message(
                        N_(
                            "%(this)s's embedded ragDescription + ragKeywords are a near-duplicate of %(other)s's "
                            "(cosine %(cosine)s): tool-RAG cannot tell them apart. Add anti-synonyms "
                            '("DO NOT USE WHEN: …use %(other)s") or keywords only this tool owns, or a '
                            "distinguishing suffix in the description."
                        ),
                        {"this": this, "other": other, "cosine": f"{cosine:.3f}"},
                    ),
                    other=other,
                    cosine=cosine,
                )
