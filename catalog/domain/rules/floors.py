"""The tier-floor rule: a mutating tool declared below the HITL tier the safety officers' floors require."""

from __future__ import annotations

from collections.abc import Iterator

from catalog.domain.floors import floor_for, is_below
from catalog.domain.keys import canonical_key, llm_name
from catalog.domain.messages import N_, Message
from catalog.domain.policy import is_mutating
from catalog.domain.rules.base import Finding, LintCatalog, Severity, _each, _finding, rule

TIER_BELOW_FLOOR = "hitl-tier-below-floor"


# Not waivable: the gate applies the floor whatever the waiver, so a waiver would only hide that the manifest
# says something the runtime no longer does (the seed: high is reserved for the highest-stakes writes).
@rule(TIER_BELOW_FLOOR, Severity.ERROR, N_("HITL tier below its floor"), waivable=False)
def _tier_below_floor(catalog: LintCatalog) -> Iterator[Finding]:
    if not catalog.tier_floors:
        return
    by_id = {f.id: f for f in catalog.tier_floors}
    for d, _ in _each(catalog):
        # A mutating tool with no tier at all is mutate-without-hitl's (an unwaivable error already, on exactly
        # these tools); a second error for the same line would only bury the declarations that are too low.
        if not d.hitl_tier or not is_mutating(mutating=d.mutating, policy_class=d.policy_class):
            continue
        floor, matched = floor_for(
            declared_id=d.declared_id,
            llm_name=llm_name(d.declared_id),
            canonical_key=canonical_key(d.declared_id),
            system=catalog.system,
            policy_domain=d.policy_domain,
            module=d.module,
            category=d.category,
            floors=catalog.tier_floors,
        )
        if not is_below(d.hitl_tier, floor):
            continue
        raising = [m for m in matched if by_id[m].min_tier == floor]
        yield _finding(
            TIER_BELOW_FLOOR,
            d,
            Message(
                N_(
                    "declares hitlTier %(declared)s but the tier floor %(floors)s requires at least %(floor)s "
                    "(%(reason)s); the approvals gate applies %(floor)s. Declare hitlTier %(floor)s."
                ),
                {
                    "declared": repr(d.hitl_tier),
                    "floors": ", ".join(raising),
                    "floor": repr(floor),
                    "reason": by_id[raising[0]].reason.strip() or Message(N_("no reason given")),
                },
            ),
            declared=d.hitl_tier,
            floor=floor,
            floors=raising,
        )
