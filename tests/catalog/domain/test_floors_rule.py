"""The rule hitl-tier-below-floor: a mutating tool declared below its tier floor is an error no waiver silences."""

from __future__ import annotations

from typing import Any

from catalog.domain.descriptor import Descriptor
from catalog.domain.floors import Floor
from catalog.domain.rules import RULES, UNWAIVABLE_RULES, LintCatalog, LintTool, lint

RULE = "hitl-tier-below-floor"
FLOORS = (
    Floor("domain:medication", "high", policy_domain="medication", reason="seed: medication is high"),
    Floor("pattern:*prescri*", "high", pattern="*prescri*", reason="seed: prescription is high"),
    Floor("domain:lab", "low", policy_domain="lab", reason="lab orders need someone's eyes"),
)


def tool(tool_id: str, **fields: Any) -> LintTool:
    base: dict[str, Any] = {
        "plane": "business",
        "module": "medication",
        "availability": "production",
        "mutating": True,
        "retry_class": "none",
        "idempotency": "durable-required",
        "policy_class": "mutate",
        "policy_domain": "medication",
        "hitl_tier": "high",
    }
    base.update(fields)
    return LintTool(Descriptor(declared_id=tool_id, **base), "meds")


def findings(*tools: LintTool, system: str = "condor", floors: tuple[Floor, ...] = FLOORS) -> list[Any]:
    return lint(LintCatalog(system=system, tools=list(tools), tier_floors=floors), only=[RULE])


def test_a_mutating_tool_declared_low_under_a_high_floor_is_an_error_that_says_what_to_declare() -> None:
    [found] = findings(tool("stopMedication", hitl_tier="low"))
    assert found.severity == "error" and found.tool_id == "stopMedication"
    assert "declares hitlTier 'low'" in found.message
    assert "domain:medication requires at least 'high'" in found.message
    assert "seed: medication is high" in found.message
    assert found.message.endswith("Declare hitlTier 'high'.")
    assert found.details == {"declared": "low", "floor": "high", "floors": ["domain:medication"]}


def test_a_missing_tier_under_a_floor_is_reported_once_by_mutate_without_hitl() -> None:
    ungated = tool("orderLabPanel", module="lab", policy_domain="lab", hitl_tier=None)
    catalog = LintCatalog(system="condor", tools=[ungated], tier_floors=FLOORS)
    rules = [f.rule for f in lint(catalog)]
    assert "mutate-without-hitl" in rules and RULE not in rules


def test_only_the_floors_that_raise_the_tier_are_named() -> None:
    [found] = findings(tool("prescribeLabPanel", module="lab", policy_domain="lab", hitl_tier="low"))
    assert found.details["floors"] == ["pattern:*prescri*"]


def test_a_tool_at_or_above_its_floor_is_clean() -> None:
    assert (
        findings(
            tool("prescribeMedication"),
            tool("orderLabTest", module="lab", policy_domain="lab", hitl_tier="high"),
            tool("recordVitals", module="vitals", policy_domain="vitals", hitl_tier="low"),
        )
        == []
    )


def test_read_tools_are_never_held_to_a_floor() -> None:
    read = tool("listPrescriptions", mutating=False, policy_class="read", hitl_tier=None)
    assert findings(read) == []


def test_the_mutating_predicate_decides_not_the_declared_class_alone() -> None:
    fallback = tool("stopMedication", policy_class=None, hitl_tier="low")  # mutating: true, class from the fallback
    declared_only = tool("pausePrescription", mutating=False, policy_class="mutate", hitl_tier="low")
    assert [f.tool_id for f in findings(fallback, declared_only)] == ["pausePrescription", "stopMedication"]


def test_a_tucan_tool_is_held_to_the_floor_of_its_category() -> None:
    floors = (Floor("domain:medications@tucan", "high", policy_domain="medications", system="tucan", reason="r"),)
    add = tool("add-medication", module="medications", category="medications", policy_domain=None, hitl_tier="low")
    assert [f.tool_id for f in findings(add, system="tucan", floors=floors)] == ["add-medication"]
    assert findings(add, system="condor", floors=floors) == []


def test_no_floors_no_findings() -> None:
    assert findings(tool("stopMedication", hitl_tier="low"), floors=()) == []


def test_the_rule_cannot_be_waived() -> None:
    assert RULES[RULE].waivable is False and RULE in UNWAIVABLE_RULES
