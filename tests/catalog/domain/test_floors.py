"""Tier floors as pure functions: what a floor catches, max(declared, floor), and what a safety officer may type."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.domain.floors import (
    PATTERN_MAX,
    REASON_MAX,
    Floor,
    approval_domain,
    floor_for,
    floor_key,
    floor_problems,
    is_below,
    pattern_problem,
    tier_with_floor,
)
from catalog.domain.keys import canonical_key, llm_name

MEDICATION = Floor("domain:medication", "high", policy_domain="medication")
PRESCRIPTION = Floor("pattern:*prescri*", "high", pattern="*prescri*")
SIGN_DOCUMENT = Floor("pattern:*sign*document*", "high", pattern="*sign*document*")
SIGN_VERB = Floor("pattern:sign.*", "high", pattern="sign.*")
LAB_LOW = Floor("domain:lab", "low", policy_domain="lab")
TUCAN_MEDICATIONS = Floor("domain:medications@tucan", "high", policy_domain="medications", system="tucan")


def floor_of(
    tool_id: str,
    floors: tuple[Floor, ...],
    *,
    system: str = "condor",
    policy_domain: str | None = None,
    module: str = "patient",
    category: str = "",
) -> tuple[str | None, tuple[str, ...]]:
    return floor_for(
        declared_id=tool_id,
        llm_name=llm_name(tool_id),
        canonical_key=canonical_key(tool_id),
        system=system,
        policy_domain=policy_domain,
        module=module,
        category=category,
        floors=floors,
    )


def test_a_domain_floor_catches_the_tools_of_its_policy_domain_only() -> None:
    assert floor_of("stopMedication", (MEDICATION,), policy_domain="medication") == ("high", ("domain:medication",))
    assert floor_of("bookAppointment", (MEDICATION,), policy_domain="appointment") == (None, ())


def test_the_tools_policy_domain_is_compared_in_lower_case() -> None:
    assert floor_of("stopMedication", (MEDICATION,), policy_domain="Medication")[0] == "high"


def test_a_tucan_tool_is_matched_by_its_category_as_its_approval_domain() -> None:
    caught = floor_of("add-medication", (MEDICATION, TUCAN_MEDICATIONS), system="tucan", category="medications")
    assert caught == ("high", ("domain:medications@tucan",))
    assert approval_domain(policy_domain=None, category="medications", module="medications") == "medications"
    assert approval_domain(policy_domain="billing", category="invoices", module="x") == "billing"
    assert approval_domain(policy_domain=None, category="", module="lab") == "lab"


def test_a_floor_limited_to_one_system_leaves_the_other_alone() -> None:
    assert floor_of("add-medication", (TUCAN_MEDICATIONS,), system="condor", policy_domain="medications") == (None, ())


@pytest.mark.parametrize(
    ("tool_id", "floor"),
    [
        ("prescribeMedication", PRESCRIPTION),  # declared id, camelCase
        ("create-prescription", PRESCRIPTION),  # hyphenated
        ("send_e_prescription", PRESCRIPTION),
        ("renewPrescription", PRESCRIPTION),
        ("signDocument", SIGN_DOCUMENT),  # declared id signdocument matches *sign*document*
        ("signDocument", SIGN_VERB),  # canonical key sign.document
        ("sign-clinical-note", SIGN_VERB),  # canonical key sign.clinical.note
    ],
)
def test_a_pattern_floor_matches_any_spelling_of_the_id(tool_id: str, floor: Floor) -> None:
    assert floor_of(tool_id, (floor,)) == ("high", (floor.id,))


def test_a_pattern_is_matched_without_regard_to_case() -> None:
    floor = Floor("pattern:*document*sign*", "high", pattern="*document*sign*")
    assert floor_of("DocumentSignature", (floor,))[0] == "high"


@pytest.mark.parametrize("tool_id", ["listVisits", "designatePharmacy", "cancelAppointment", "signupUser"])
def test_a_pattern_floor_leaves_other_tools_alone(tool_id: str) -> None:
    assert floor_of(tool_id, (PRESCRIPTION, SIGN_VERB)) == (None, ())


def test_the_highest_matching_floor_wins_and_every_match_is_named() -> None:
    tier, ids = floor_of("prescribeLabPanel", (LAB_LOW, PRESCRIPTION), policy_domain="lab")
    assert tier == "high" and ids == ("domain:lab", "pattern:*prescri*")


@pytest.mark.parametrize(
    ("declared", "floor", "applied"),
    [
        ("low", "high", "high"),
        ("high", "low", "high"),
        ("high", "high", "high"),
        ("low", "low", "low"),
        (None, "high", "high"),
        (None, "low", "low"),
        ("low", None, "low"),
        (None, None, None),
    ],
)
def test_the_gate_applies_the_higher_of_declared_and_floor(
    declared: str | None, floor: str | None, applied: str | None
) -> None:
    assert tier_with_floor(declared, floor) == applied
    assert is_below(declared, floor) == (applied != declared)


def test_a_floors_key_names_what_it_matches_and_its_system() -> None:
    assert floor_key(policy_domain="medication", pattern="", system="") == "domain:medication"
    assert floor_key(policy_domain="", pattern="*prescri*", system="tucan") == "pattern:*prescri*@tucan"


def problems(**fields: Any) -> dict[str, str]:
    base = {"policy_domain": "", "pattern": "", "system": "", "min_tier": "high", "reason": "seed reservation"}
    base.update(fields)
    return floor_problems(**base)


def test_a_floor_matches_by_domain_or_pattern_not_both_and_not_neither() -> None:
    assert problems(policy_domain="medication") == {}
    assert problems(pattern="*prescri*") == {}
    assert "not both" in problems(policy_domain="medication", pattern="*prescri*")["pattern"]
    assert "policy domain" in problems()["policy_domain"]


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("*", "at least 3 letters"),
        ("*-*", "at least 3 letters"),
        ("*a?*", "at least 3 letters"),
        ("x" * (PATTERN_MAX + 1), f"at most {PATTERN_MAX}"),
        ("*pre scri*", "wildcards"),
        ("*prescri*/", "wildcards"),
        ("sign[-_*", "needs its own ']'"),
        ("sign[[-]]*", "needs its own ']'"),
    ],
)
def test_a_pattern_is_bounded_and_says_what_is_wrong(pattern: str, says: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None and says in problem


def test_fnmatch_sets_are_accepted() -> None:
    assert pattern_problem("sign[-_.]*") is None
    assert pattern_problem("*prescri*") is None


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"policy_domain": "Medication"}, "policy_domain", "lower-case"),
        ({"policy_domain": "x" * 61}, "policy_domain", "at most 60"),
        ({"policy_domain": "lab", "system": "mars"}, "system", "condor, tucan"),
        ({"policy_domain": "lab", "min_tier": "medium"}, "min_tier", "low, high"),
        ({"policy_domain": "lab", "reason": "  "}, "reason", "write why"),
        ({"policy_domain": "lab", "reason": "r" * (REASON_MAX + 1)}, "reason", f"at most {REASON_MAX}"),
    ],
)
def test_each_field_is_checked_with_a_message_that_says_what_to_do(
    fields: dict[str, str], field: str, says: str
) -> None:
    found = problems(**fields)
    assert says in found[field], found
