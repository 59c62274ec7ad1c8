"""What is in effect: strengthening and weakening changes, and the declaration clinical profiles are served.

The rule (TOOLS.md, "What is in effect"): a change that makes a tool stricter takes effect at import; any other
change of a safety-relevant axis, or of the LLM-facing text of a mutating tool, waits for a safety officer's
sign-off. Until then each axis in effect is the stricter of what was in effect and what is proposed, and the texts
stay as signed off. A tool that was never signed off has nothing in effect (it does not exist for a clinical
profile). Non-clinical profiles (staging, demo) see the newest import at once.

Everything here works on plain declared-field mappings (`Descriptor.declared()`, `Tool.in_effect`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.domain.floors import tier_with_floor
from catalog.domain.mcp import PIN_FIELDS
from catalog.domain.policy import is_mutating
from catalog.domain.vocabulary import SAFETY_RELEVANT_FIELDS, HitlTier, Plane

STRENGTHENING = "strengthening"
WEAKENING = "weakening"

# The text the model reads: a rewrite of it on a mutating tool is a weakening change (tool poisoning, "rug pull").
LLM_TEXT_FIELDS: tuple[str, ...] = (
    "description",
    "rag_description",
    "rag_keywords",
    "instruction_fragment",
    "styling_fragment",
    "output_instructions",
    "input_schema",
)

# What a tool is called by and what its floors and approver route are derived from (the approval domain falls back
# on category, then module: `catalog.domain.floors.approval_domain`). A new spelling routes a name the officers never
# saw to the tool; a changed module or category of a mutating tool can lower its floored tier or move its approvals
# to another group. Neither is ordered, so both are governed as a whole: see `change_classes`.
ALIASES = "aliases"
ROUTE_FIELDS: tuple[str, ...] = ("module", "category")

# Pseudo-fields of a change record for a whole tool coming or going.
TOOL_ADDED = "tool"
TOOL_REMOVED = "tool"

# Axes with an order, from the least to the most strict. `None` is where an unset value stands: an undeclared
# tier on a mutation suspends in every dispatch mode (fail closed), stricter than `low`, not as strict as `high`;
# an unset class falls back on the mutating flag.
_ORDER: dict[str, tuple[Any, ...]] = {
    "hitl_tier": (HitlTier.LOW.value, None, HitlTier.HIGH.value),
    "mutating": (False, True),
    "policy_class": ("read", None, "mutate"),
    "retry_class": ("transient", "none"),
    "idempotency": ("none", "natural", "durable-required"),
    # Narrowing: fewer clinical profiles make it active (clinical profiles activate production, some preview).
    "availability": ("production", "preview", "demo-only"),
}


def axis_class(axis: str, old: Any, new: Any) -> str:
    """Whether changing one safety-relevant axis from `old` to `new` strengthens or weakens the declaration.

    Strengthening: tier low→high, mutating false→true, retry transient→none, idempotency towards
    durable-required, availability narrowing, the plane leaving business. Everything else weakens, including a
    changed policy domain, alwaysInclude switched either way, and a value this code does not know (fail closed).
    """
    if axis == "plane":
        return STRENGTHENING if old == Plane.BUSINESS and new != Plane.BUSINESS else WEAKENING
    order = _ORDER.get(axis)
    if order is None or old not in order or new not in order:
        return WEAKENING
    return STRENGTHENING if order.index(new) > order.index(old) else WEAKENING


def _mutates(declared: Mapping[str, Any] | None) -> bool:
    if declared is None:
        return False
    return is_mutating(mutating=bool(declared.get("mutating")), policy_class=declared.get("policy_class"))


def change_classes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, str]:
    """{field: strengthening | weakening} for each governed field that differs between two declarations.

    `old` None: a new tool (weakening: it needs sign-off before it exists for a clinical profile); `new` None: a
    removed tool (strengthening). Text fields count only on a tool that mutates on either side (fail closed).
    """
    if old is None and new is None:
        return {}
    if old is None:
        return {TOOL_ADDED: WEAKENING}
    if new is None:
        return {TOOL_REMOVED: STRENGTHENING}
    classes = {
        axis: axis_class(axis, old.get(axis), new.get(axis))
        for axis in SAFETY_RELEVANT_FIELDS
        if old.get(axis) != new.get(axis)
    }
    spellings = aliases_class(old.get(ALIASES), new.get(ALIASES))
    if spellings is not None:
        classes[ALIASES] = spellings
    if _mutates(old) or _mutates(new):
        classes.update({name: WEAKENING for name in LLM_TEXT_FIELDS if old.get(name) != new.get(name)})
        classes.update({name: WEAKENING for name in ROUTE_FIELDS if old.get(name) != new.get(name)})
    if old.get("mcp") is not None or new.get("mcp") is not None:
        # An MCP tool is pinned: any change of what the model reads or the gate derives from, on a read-only tool
        # too, waits for sign-off (a server can rewrite a description after review: the "rug pull").
        classes.update({name: WEAKENING for name in PIN_FIELDS if old.get(name) != new.get(name)})
    return classes


def aliases_class(old: Any, new: Any) -> str | None:
    """A spelling added (new, or moved here from another tool) weakens; only spellings dropped strengthens; None:
    the same spellings (order aside)."""
    before, after = set(old or ()), set(new or ())
    if before == after:
        return None
    return WEAKENING if after - before else STRENGTHENING


def project(in_effect: Mapping[str, Any] | None, proposed: Mapping[str, Any]) -> dict[str, Any] | None:
    """The declaration in effect for clinical profiles after `proposed` is imported over `in_effect`.

    Strengthening changes and ungoverned fields (metadataRef, source, a read tool's module, …) take the proposed
    value; weakening changes keep the value in effect. Aliases in effect are the spellings both sides have: a dropped
    one stops routing at once, an added one waits. Nothing in effect stays nothing: a tool that was never signed off
    waits as a whole.
    """
    if in_effect is None:
        return None
    result = dict(proposed)
    if result.get("mcp") is None and "mcp" not in in_effect:
        result.pop("mcp", None)  # a Condor or TUCAN declaration signed off before MCP tools existed: unchanged
    for name, klass in change_classes(in_effect, proposed).items():
        if name == ALIASES:
            kept = set(in_effect.get(ALIASES) or ())
            result[ALIASES] = [a for a in proposed.get(ALIASES) or () if a in kept]
        elif klass == WEAKENING:
            result[name] = in_effect.get(name)
    return result


def awaits_signoff(in_effect: Mapping[str, Any] | None, proposed: Mapping[str, Any]) -> bool:
    """Whether the newest declaration differs from what clinical profiles are served."""
    return in_effect is None or any(in_effect.get(name) != value for name, value in proposed.items())


def declaration_for(
    *, clinical: bool, declared: Mapping[str, Any], in_effect: Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    """The one projection every runtime read uses: the newest import for a non-clinical profile, what is in
    effect for a clinical one (None: the tool does not exist there yet)."""
    return in_effect if clinical else declared


def needs_two_signoffs(in_effect: Mapping[str, Any] | None, proposed: Mapping[str, Any]) -> bool:
    """A weakening change to a tier-high tool needs two safety officers (tier high on either side)."""
    if not awaits_signoff(in_effect, proposed):
        return False
    tiers = {proposed.get("hitl_tier"), in_effect.get("hitl_tier") if in_effect is not None else None}
    return HitlTier.HIGH.value in tiers


def floored_tier(declared: str | None, floor: str | None) -> str | None:
    """The tier the gate applies to a mutating tool: its declared tier raised to its floor. An undeclared tier
    stays undeclared: the gate suspends it in every mode and flags it (`ungated`), which no floor makes stricter,
    and the missing declaration stays visible (`mutate-without-hitl`)."""
    return tier_with_floor(declared, floor) if declared is not None else None
