"""Strengthening and weakening (TOOLS.md, "What is in effect"), as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.domain.effect import (
    STRENGTHENING,
    WEAKENING,
    awaits_signoff,
    axis_class,
    change_classes,
    declaration_for,
    needs_two_signoffs,
    project,
)


def declared(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "plane": "business",
        "module": "medication",
        "category": "",
        "availability": "production",
        "policy_class": "mutate",
        "policy_domain": "medication",
        "mutating": True,
        "retry_class": "none",
        "idempotency": "durable-required",
        "hitl_tier": "high",
        "description": "",
        "rag_description": "USE WHEN prescribing",
        "rag_keywords": {"en": ["prescribe"], "de": ["verordnen"]},
        "instruction_fragment": None,
        "styling_fragment": None,
        "output_instructions": None,
        "output_contains_ids": False,
        "always_include": False,
        "metadata_ref": None,
        "source_path": None,
        "aliases": [],
        "input_schema": None,
    }
    return {**base, **overrides}


@pytest.mark.parametrize(
    ("axis", "old", "new", "expected"),
    [
        ("hitl_tier", "low", "high", STRENGTHENING),
        ("hitl_tier", "high", "low", WEAKENING),
        ("hitl_tier", None, "low", WEAKENING),  # an undeclared tier suspends in every mode: low is weaker
        ("hitl_tier", "low", None, STRENGTHENING),
        ("mutating", False, True, STRENGTHENING),
        ("mutating", True, False, WEAKENING),
        ("retry_class", "transient", "none", STRENGTHENING),
        ("retry_class", "none", "transient", WEAKENING),
        ("idempotency", "none", "durable-required", STRENGTHENING),
        ("idempotency", "natural", "durable-required", STRENGTHENING),
        ("idempotency", "durable-required", "natural", WEAKENING),
        ("availability", "production", "demo-only", STRENGTHENING),
        ("availability", "preview", "production", WEAKENING),
        ("plane", "business", "planner-control", STRENGTHENING),
        ("plane", "planner-control", "business", WEAKENING),
        ("plane", "planner-control", "agent-control", WEAKENING),
        ("policy_domain", "medication", "billing", WEAKENING),
        ("always_include", False, True, WEAKENING),
        ("always_include", True, False, WEAKENING),
        ("policy_class", "read", "mutate", STRENGTHENING),
        ("policy_class", "mutate", "read", WEAKENING),
        ("hitl_tier", "high", "urgent", WEAKENING),  # a value this code does not know: fail closed
    ],
)
def test_each_axis_is_classed(axis: str, old: Any, new: Any, expected: str) -> None:
    assert axis_class(axis, old, new) == expected


def test_a_new_tool_weakens_and_a_removed_one_strengthens() -> None:
    assert change_classes(None, declared()) == {"tool": WEAKENING}
    assert change_classes(declared(), None) == {"tool": STRENGTHENING}


def test_text_counts_only_on_a_mutating_tool() -> None:
    rewritten = {"rag_description": "USE WHEN anything at all"}
    assert change_classes(declared(), declared(**rewritten)) == {"rag_description": WEAKENING}
    read = {"mutating": False, "policy_class": "read", "hitl_tier": None}
    assert change_classes(declared(**read), declared(**read, **rewritten)) == {}
    # A tool that stops mutating in the same revision still counts as mutating (either side).
    assert change_classes(declared(), declared(**read, **rewritten))["rag_description"] == WEAKENING


def test_project_keeps_weakening_values_and_takes_strengthening_ones() -> None:
    in_effect = declared(hitl_tier="low", retry_class="none", rag_description="old text")
    proposed = declared(hitl_tier="high", rag_description="new text", module="meds", policy_domain="billing")
    projected = project(in_effect, proposed)
    assert projected is not None
    assert projected["hitl_tier"] == "high"  # strengthening: at once
    assert projected["rag_description"] == "old text"  # text of a mutating tool: after sign-off
    assert projected["policy_domain"] == "medication"  # a changed domain waits
    assert projected["module"] == "medication"  # a floor's and an approver route's input: waits on a mutating tool
    assert awaits_signoff(projected, proposed)
    assert project(None, proposed) is None and awaits_signoff(None, proposed)


def test_a_new_or_moved_spelling_waits_and_a_dropped_one_stops_routing_at_once() -> None:
    signed = declared(aliases=["rx", "prescribe"])
    assert change_classes(signed, declared(aliases=["prescribe", "rx"])) == {}  # order is not a change
    assert change_classes(signed, declared(aliases=["rx"])) == {"aliases": STRENGTHENING}
    assert change_classes(signed, declared(aliases=["rx", "book_now"])) == {"aliases": WEAKENING}
    projected = project(signed, declared(aliases=["rx", "book_now"]))
    assert projected is not None and projected["aliases"] == ["rx"]  # "prescribe" dropped now, "book_now" waits
    assert awaits_signoff(projected, declared(aliases=["rx", "book_now"]))
    # A read tool too: a name routed to it is a name the officers never saw routed there.
    read = declared(mutating=False, policy_class="read", hitl_tier=None)
    assert change_classes(read, {**read, "aliases": ["medication.prescribe"]}) == {"aliases": WEAKENING}


@pytest.mark.parametrize("route_field", ["module", "category"])
def test_a_floor_or_route_input_waits_on_a_mutating_tool_and_not_on_a_read_tool(route_field: str) -> None:
    assert change_classes(declared(), declared(**{route_field: "scheduling"})) == {route_field: WEAKENING}
    read = declared(mutating=False, policy_class="read", hitl_tier=None)
    assert change_classes(read, {**read, route_field: "scheduling"}) == {}
    projected = project(declared(), declared(**{route_field: "scheduling"}))
    assert projected is not None and projected[route_field] == declared()[route_field]


def test_a_strengthening_cannot_be_undone_without_sign_off() -> None:
    signed = declared(hitl_tier="low")
    raised = project(signed, declared(hitl_tier="high"))
    lowered_again = project(raised, declared(hitl_tier="low"))
    assert lowered_again is not None and lowered_again["hitl_tier"] == "high"


def test_clinical_profiles_are_served_what_is_in_effect() -> None:
    newest, in_effect = declared(hitl_tier="low"), declared()
    assert declaration_for(clinical=True, declared=newest, in_effect=in_effect) is in_effect
    assert declaration_for(clinical=False, declared=newest, in_effect=in_effect) is newest
    assert declaration_for(clinical=True, declared=newest, in_effect=None) is None


def test_a_weakening_of_a_tier_high_tool_needs_two_sign_offs() -> None:
    assert needs_two_signoffs(declared(), declared(hitl_tier="low"))
    assert needs_two_signoffs(None, declared())
    assert not needs_two_signoffs(declared(hitl_tier="low"), declared(hitl_tier="low", rag_description="x"))
    assert not needs_two_signoffs(declared(), declared())
