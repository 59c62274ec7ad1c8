"""The suspend policy as a table: every combination of class, mutating flag, tier, mode and eligibility."""

from __future__ import annotations

import itertools

import pytest

from approvals.domain import Decision, suspend_policy

MODES = ("operator", "supervised", "ambient")
TIERS = ("high", "low", None)


def expected(*, known: bool, eligible: bool, policy_class: str, mutating: bool, tier: str | None, mode: str) -> str:
    """The issue's table, written out independently of the implementation."""
    if not known or not eligible:
        return "refuse"
    if policy_class == "read" and not mutating:
        return "allow"
    if tier == "high":
        return "suspend"
    if tier == "low":
        return "allow" if mode == "operator" else "suspend"
    return "suspend"  # ungated mutation: fail closed


CASES = list(itertools.product((True, False), (True, False), ("read", "mutate"), (True, False), TIERS, MODES))


@pytest.mark.parametrize(("known", "eligible", "policy_class", "mutating", "tier", "mode"), CASES)
def test_policy_table(
    known: bool, eligible: bool, policy_class: str, mutating: bool, tier: str | None, mode: str
) -> None:
    outcome = suspend_policy(
        known=known,
        plan_eligible=eligible,
        effective_policy_class=policy_class,
        is_mutating=mutating,
        hitl_tier=tier,
        dispatch_mode=mode,
    )
    want = expected(known=known, eligible=eligible, policy_class=policy_class, mutating=mutating, tier=tier, mode=mode)
    assert outcome.decision == want
    mutates = policy_class == "mutate" or mutating
    assert outcome.flagged == (want == "suspend" and mutates and tier is None)
    if want == "suspend":
        assert outcome.tier_key == (tier or "ungated")
    else:
        assert outcome.tier_key is None


def test_the_table_covers_every_combination() -> None:
    assert len(CASES) == 2 * 2 * 2 * 2 * 3 * 3 == 144


def test_read_tools_are_allowed_in_every_mode_whatever_a_stale_tier_says() -> None:
    for mode, tier in itertools.product(MODES, TIERS):
        outcome = suspend_policy(
            known=True,
            plan_eligible=True,
            effective_policy_class="read",
            is_mutating=False,
            hitl_tier=tier,
            dispatch_mode=mode,
        )
        assert outcome.decision == Decision.ALLOW and outcome.reason == "read"


def test_tier_high_suspends_even_in_operator_chat() -> None:
    outcome = suspend_policy(
        known=True,
        plan_eligible=True,
        effective_policy_class="mutate",
        is_mutating=True,
        hitl_tier="high",
        dispatch_mode="operator",
        tool="condor:prescribeMedication",
    )
    assert outcome.decision == Decision.SUSPEND and outcome.reason == "tier-high"
    assert "always waits for an approver" in outcome.message


def test_tier_low_is_approved_by_the_person_typing_in_operator_mode_only() -> None:
    def decide(mode: str) -> Decision:
        return suspend_policy(
            known=True,
            plan_eligible=True,
            effective_policy_class="mutate",
            is_mutating=True,
            hitl_tier="low",
            dispatch_mode=mode,
        ).decision

    assert [decide(m) for m in MODES] == [Decision.ALLOW, Decision.SUSPEND, Decision.SUSPEND]


def test_an_ungated_mutation_is_suspended_and_flagged_never_allowed() -> None:
    for mode in MODES:
        outcome = suspend_policy(
            known=True,
            plan_eligible=True,
            effective_policy_class="mutate",
            is_mutating=True,
            hitl_tier=None,
            dispatch_mode=mode,
            tool="tucan:create-prescription",
        )
        assert outcome.decision == Decision.SUSPEND and outcome.flagged and outcome.reason == "ungated-mutation"
        assert "declares no HITL tier" in outcome.message and "fail closed" in outcome.message


def test_an_unknown_tier_value_fails_closed_as_ungated() -> None:
    outcome = suspend_policy(
        known=True,
        plan_eligible=True,
        effective_policy_class="mutate",
        is_mutating=True,
        hitl_tier="medium",
        dispatch_mode="operator",
    )
    assert outcome.decision == Decision.SUSPEND and outcome.flagged


def test_a_row_that_reads_as_read_but_mutates_is_gated() -> None:
    # The seed's hole: a policy class that never reached the tool object read as `read` at the gate.
    outcome = suspend_policy(
        known=True,
        plan_eligible=True,
        effective_policy_class="read",
        is_mutating=True,
        hitl_tier=None,
        dispatch_mode="operator",
    )
    assert outcome.decision == Decision.SUSPEND and outcome.flagged


def test_refusals_say_why() -> None:
    unknown = suspend_policy(
        known=False,
        plan_eligible=False,
        effective_policy_class=None,
        is_mutating=False,
        hitl_tier=None,
        dispatch_mode="operator",
        tool="'prescribeMedicaton'",
    )
    assert unknown.reason == "unknown-tool" and "'prescribeMedicaton' is not a live tool" in unknown.message
    ineligible = suspend_policy(
        known=True,
        plan_eligible=False,
        effective_policy_class="read",
        is_mutating=False,
        hitl_tier=None,
        dispatch_mode="operator",
        tool="condor:searchTools",
        profile="clinical-production",
    )
    assert ineligible.reason == "not-plan-eligible"
    assert "not plan-eligible under profile clinical-production" in ineligible.message
    mode = suspend_policy(
        known=True,
        plan_eligible=True,
        effective_policy_class="read",
        is_mutating=False,
        hitl_tier=None,
        dispatch_mode="autonomous",
    )
    assert mode.decision == Decision.REFUSE and "operator, supervised, ambient" in mode.message
