from __future__ import annotations

import pytest

from catalog.domain.ownership import derive_owner
from catalog.domain.profiles import is_plan_eligible, non_production_active

RULES = {
    ("business", "medication"): "meds",
    ("business", "*"): "core",
    ("planner-control", "*"): "planner",
}


@pytest.mark.parametrize(
    ("plane", "module", "owner"),
    [
        ("business", "medication", "meds"),  # exact rule wins over the wildcard
        ("business", "billing", "core"),  # wildcard of the plane
        ("planner-control", "planner", "planner"),
        ("agent-control", "agent", None),  # no rule: unowned
    ],
)
def test_owner_is_the_most_specific_rule(plane: str, module: str, owner: str | None) -> None:
    assert derive_owner(plane, module, RULES) == owner


def test_wildcard_of_another_plane_does_not_apply() -> None:
    assert derive_owner("agent-control", "medication", {("business", "*"): "core"}) is None


@pytest.mark.parametrize(
    ("plane", "availability", "include", "eligible"),
    [
        ("business", "production", [], True),
        ("business", "preview", [], False),
        ("business", "preview", ["tool"], True),  # explicit include
        ("planner-control", "production", [], False),  # never a business candidate
        ("agent-control", "production", ["tool"], False),  # not even when included
    ],
)
def test_plan_eligibility(plane: str, availability: str, include: list[str], eligible: bool) -> None:
    assert (
        is_plan_eligible(
            plane=plane,
            availability=availability,
            declared_id="tool",
            profile_availabilities=["production"],
            profile_includes=include,
            same_system=True,
        )
        is eligible
    )


def test_a_profile_includes_only_its_own_systems_tool_of_that_id() -> None:
    # An MCP server's preview tool named like a Condor tool the clinical profile includes stays inactive there.
    included = {"profile_availabilities": ["production"], "profile_includes": ["draftReferralLetter"]}
    tool = {"plane": "business", "availability": "preview", "declared_id": "draftReferralLetter"}
    assert is_plan_eligible(**tool, **included, same_system=True)
    assert not is_plan_eligible(**tool, **included, same_system=False)


def test_non_production_active_lists_only_active_non_production_tools() -> None:
    tools = [("a", "production"), ("b", "preview"), ("c", "demo-only"), ("d", "demo-only")]
    assert non_production_active(tools, profile_availabilities=["production"], profile_includes=[]) == []
    assert non_production_active(tools, profile_availabilities=["production"], profile_includes=["c"]) == ["c"]
    assert non_production_active(tools, profile_availabilities=["production", "preview"], profile_includes=[]) == ["b"]
