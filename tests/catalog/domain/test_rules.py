"""Each rule fires on a descriptor that breaks it and stays silent on one that does not (pure)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from catalog.domain import rules
from catalog.domain.descriptor import Descriptor
from catalog.domain.manifest import Agent, ForcedFloor, Profile

RAG = (
    "USE WHEN: the clinician asks to list the active medications of the patient in context.\n"
    "DO NOT USE WHEN: the clinician wants to prescribe or stop a medication.\n"
    "REQUIRES: a patient in context.\n"
    "PRODUCES: a card listing each active medication with dose and route."
)

GOOD = Descriptor(
    declared_id="listActiveMedications",
    plane="business",
    module="medication",
    availability="production",
    mutating=False,
    retry_class="transient",
    idempotency="natural",
    policy_class="read",
    policy_domain="medication",
    rag_description=RAG,
    rag_keywords={"en": ["active medications"], "de": ["aktuelle Medikation"]},
    output_contains_ids=True,
    output_instructions="NEVER show UUIDs; name the drug.",
)
GOOD_MUTATION = replace(
    GOOD,
    declared_id="prescribeMedication",
    mutating=True,
    policy_class="mutate",
    hitl_tier="high",
    retry_class="none",
    idempotency="durable-required",
)


def view(*tools: Descriptor, owner: str | None = "meds", system: str = "condor", **kwargs: Any) -> rules.LintCatalog:
    return rules.LintCatalog(system=system, tools=[rules.LintTool(t, owner) for t in tools], **kwargs)


def fired(rule_id: str, catalog: rules.LintCatalog) -> list[rules.Finding]:
    return rules.lint(catalog, only=[rule_id])


def test_a_clean_catalog_has_no_findings() -> None:
    clinical = Profile("clinical-production", True, ["production"], [])
    assert rules.lint(view(GOOD, GOOD_MUTATION, profiles=[clinical], baseline_count=2)) == []


def test_every_rule_has_an_id_severity_and_title() -> None:
    for rule_id, spec in rules.RULES.items():
        assert spec.id == rule_id and spec.severity in rules.Severity and spec.title
    assert rules.UNWAIVABLE_RULES == (
        "mutate-without-hitl",
        "non-production-in-clinical",
        "hitl-tier-below-floor",
        # Found in what ran (catalog.usage): a write run twice, an ungated stamp, an unapproved tier-high run.
        "runtime-retried-write",
        "runtime-stamp-mismatch",
        "runtime-unapproved-execution",
    )


def test_mutate_without_hitl() -> None:
    ungated = replace(GOOD_MUTATION, hitl_tier=None)
    (finding,) = fired("mutate-without-hitl", view(ungated))
    assert finding.severity == "error" and finding.tool_id == "prescribeMedication"
    assert "ungated mutation" in finding.message and "(declared)" in finding.message
    fallback = replace(GOOD, mutating=True, policy_class=None, retry_class="none")  # TUCAN's shape
    (finding,) = fired("mutate-without-hitl", view(fallback))
    assert "from the mutating fallback" in finding.message
    assert fired("mutate-without-hitl", view(GOOD, GOOD_MUTATION)) == []


def test_non_production_in_clinical() -> None:
    demo_tool = replace(GOOD, declared_id="generateDemoPatient", availability="demo-only")
    clinical = Profile("clinical-production", True, ["production"], ["generateDemoPatient"])
    (finding,) = fired("non-production-in-clinical", view(demo_tool, profiles=[clinical]))
    assert finding.details == {"profile": "clinical-production", "availability": "demo-only"}
    not_included = Profile("clinical-production", True, ["production"], [])
    demo = Profile("demo", False, ["production", "demo-only"], [])
    assert fired("non-production-in-clinical", view(demo_tool, profiles=[not_included, demo])) == []


def test_unowned() -> None:
    (finding,) = fired("unowned", view(GOOD, owner=None))
    assert "(business, medication) or (business, *)" in finding.message
    assert fired("unowned", view(GOOD)) == []


def test_key_collision_of_spellings() -> None:
    twin = replace(GOOD, declared_id="list_active_medications")
    found = fired("key-collision", view(GOOD, twin))
    assert sorted(f.tool_id for f in found) == ["listActiveMedications", "list_active_medications"]
    assert all(f.details["canonical_key"] == "list.active.medications" for f in found)
    assert fired("key-collision", view(GOOD, GOOD_MUTATION)) == []


def test_key_collision_with_the_llm_underscore_exposure() -> None:
    hyphen = replace(GOOD, declared_id="show-notification-banner")
    underscore = replace(GOOD, declared_id="show_notification_banner")
    found = {f.tool_id: f for f in fired("key-collision", view(hyphen, underscore, system="tucan"))}
    assert "not hyphenated" in found["show_notification_banner"].message
    assert found["show_notification_banner"].details["llm_clash"] == ["show-notification-banner"]
    assert "folds to canonical key" in found["show-notification-banner"].message


def test_control_plane_candidate() -> None:
    search = replace(GOOD, declared_id="search_tools", plane="planner-control", module="planner")
    found = fired(
        "control-plane-candidate",
        view(
            search,
            profiles=[Profile("demo", False, ["production"], ["search_tools"])],
            forced_floors=[ForcedFloor("intake", "multi-entity-intake", ["search_tools"])],
        ),
    )
    (finding,) = found
    assert finding.details["places"] == ["forced floor 'intake'", "profile 'demo' include"]
    agent_bound = fired("control-plane-candidate", view(search, agents=[Agent("clinical", ["planner"])]))
    assert agent_bound[0].details["places"] == ["agent 'clinical' binding"]
    assert fired("control-plane-candidate", view(search)) == []
    business_in_floor = view(GOOD, forced_floors=[ForcedFloor("intake", "attachments", [GOOD.declared_id])])
    assert fired("control-plane-candidate", business_in_floor) == []


def test_styling_colour_literal() -> None:
    (finding,) = fired("styling-colour-literal", view(replace(GOOD, styling_fragment="Severity in #d00 or red.")))
    assert finding.details["literals"] == ["#d00", "red"]
    assert fired("styling-colour-literal", view(replace(GOOD, styling_fragment="Use the severity badge."))) == []


def test_retry_declared_on_mutating_shows_both_values() -> None:
    (finding,) = fired("retry-declared-on-mutating", view(replace(GOOD_MUTATION, retry_class="transient")))
    assert finding.details == {"declared": "transient", "effective": "none"}
    assert fired("retry-declared-on-mutating", view(GOOD, GOOD_MUTATION)) == []


def test_policy_class_fallback_on_condor_only() -> None:
    fallback = replace(GOOD_MUTATION, policy_class=None)
    (finding,) = fired("policy-class-fallback", view(fallback))
    assert "fallback" in finding.message
    assert fired("policy-class-fallback", view(GOOD_MUTATION)) == []
    assert fired("policy-class-fallback", view(fallback, system="tucan")) == []  # nothing to declare there


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "ragDescription is missing"),
        ("Lists medications.", "ragDescription has 1 line(s), not the four-line shape"),
        (RAG.replace("REQUIRES:", "NEEDS:"), "line 3 'NEEDS: a patient in context.' should start with 'REQUIRES'"),
        (
            RAG.replace("PRODUCES: a card listing each active medication with dose and route.", "PRODUCES:"),
            "line 4 'PRODUCES:' says nothing after 'PRODUCES'",
        ),
    ],
)
def test_rag_description_shape(text: str, problem: str) -> None:
    (finding,) = fired("rag-description-shape", view(replace(GOOD, rag_description=text)))
    assert finding.details["problem"].startswith(problem)


def test_rag_description_shape_accepts_the_four_lines() -> None:
    assert fired("rag-description-shape", view(GOOD)) == []


def test_rag_keywords_languages_declared_per_language() -> None:
    (finding,) = fired("rag-keywords-languages", view(replace(GOOD, rag_keywords={"en": ["active medications"]})))
    assert finding.details["missing"] == ["de"] and finding.details["detected"] is False
    assert fired("rag-keywords-languages", view(GOOD)) == []


def test_rag_keywords_languages_detected_for_a_flat_list() -> None:
    english_only = replace(GOOD, rag_keywords={"und": ["table view", "open table", "SOP"]})
    (finding,) = fired("rag-keywords-languages", view(english_only, system="tucan"))
    assert finding.details["keywords"]["en"] == ["table view", "open table"]
    assert finding.details["keywords"]["und"] == ["SOP"]
    mixed = replace(GOOD, rag_keywords={"und": ["table view", "Tabelle öffnen"]})
    assert fired("rag-keywords-languages", view(mixed, system="tucan")) == []


@pytest.mark.parametrize(
    "instructions", [None, "", "Name the drug.", "Show the UUID of each order.", "IDs are fine to show."]
)
def test_uuid_output_instruction_fires(instructions: str | None) -> None:
    assert fired("uuid-output-instruction", view(replace(GOOD, output_instructions=instructions)))


@pytest.mark.parametrize(
    "instructions", ["NEVER show UUIDs.", "Do not display UUIDs; name the patient.", "no UUIDs in the answer"]
)
def test_uuid_output_instruction_is_satisfied(instructions: str) -> None:
    assert fired("uuid-output-instruction", view(replace(GOOD, output_instructions=instructions))) == []
    assert (
        fired("uuid-output-instruction", view(replace(GOOD, output_contains_ids=False, output_instructions=None))) == []
    )


def test_fragment_over_budget_shows_the_truncated_text() -> None:
    long_fragment = (
        "Vor dem Aufruf Dosis, Applikationsweg und Häufigkeit bestätigen; bei Niereninsuffizienz die "
        "Dosisanpassung prüfen und Rückfrage stellen."
    )
    (finding,) = fired("fragment-over-budget", view(replace(GOOD, instruction_fragment=long_fragment)))
    assert finding.details["field"] == "instructionFragment"
    assert finding.details["bytes"] > 120
    truncated = finding.details["truncated"]
    assert len(truncated.encode()) <= 120 and truncated.endswith("…") and long_fragment.startswith(truncated[:-1])
    assert fired("fragment-over-budget", view(replace(GOOD, instruction_fragment="Confirm dose first."))) == []


def test_manifest_line_bounds() -> None:
    (short,) = fired("manifest-line-bounds", view(replace(GOOD, rag_description="USE WHEN: meds.")))
    assert short.details["bytes"] < 120 and "too short" in short.message
    (long,) = fired("manifest-line-bounds", view(replace(GOOD, rag_description="USE WHEN: " + "x" * 400)))
    assert long.details["bytes"] > 300 and len(long.details["line"].encode()) <= 300
    assert fired("manifest-line-bounds", view(GOOD)) == []
    control = replace(GOOD, plane="agent-control", rag_description="")
    assert fired("manifest-line-bounds", view(control)) == []  # never a candidate


def test_count_drift() -> None:
    (finding,) = fired("count-drift", view(GOOD, GOOD_MUTATION, baseline_count=1))
    assert finding.tool_id is None and finding.details == {"live": 2, "baseline": 1}
    assert fired("count-drift", view(GOOD, GOOD_MUTATION, baseline_count=2)) == []
    assert fired("count-drift", view(GOOD, GOOD_MUTATION)) == []


def test_registry_is_open_for_new_rules() -> None:
    @rules.rule("test-only-rule", rules.Severity.WARNING, "A rule added by a later issue")
    def _check(catalog: rules.LintCatalog) -> list[rules.Finding]:
        return [rules.Finding("test-only-rule", "warning", t.descriptor.declared_id, "x") for t in catalog.tools]

    try:
        assert [f.rule for f in rules.lint(view(GOOD))] == ["test-only-rule"]
        with pytest.raises(ValueError, match="registered twice"):
            rules.rule("test-only-rule", rules.Severity.WARNING, "again")(_check)
    finally:
        del rules.RULES["test-only-rule"]


@pytest.mark.parametrize(
    "text",
    [
        RAG,
        RAG.replace(":", ""),  # the seeds write the headings without a colon
        RAG.replace("USE WHEN:", "use when")
        .replace("DO NOT use when", "Do not use when")
        .replace("REQUIRES:", "Requires"),
    ],
)
def test_rag_description_shape_reads_headings_with_or_without_colon_in_any_case(text: str) -> None:
    assert fired("rag-description-shape", view(replace(GOOD, rag_description=text))) == []


def test_rag_description_shape_does_not_take_do_not_use_when_for_use_when() -> None:
    swapped = "\n".join(RAG.splitlines()[i] for i in (1, 0, 2, 3))
    (finding,) = fired("rag-description-shape", view(replace(GOOD, rag_description=swapped)))
    assert finding.details["problem"].startswith("line 1 'DO NOT USE WHEN: the clinician' should start with 'USE WHEN'")


def test_a_well_written_seed_style_tool_reaches_the_manifest_minimum() -> None:
    seed_style = replace(
        GOOD,
        declared_id="list-allergies",
        rag_description="USE WHEN the user asks for the patient's allergies\nDO NOT USE WHEN recording a new allergy\n"
        "REQUIRES patientId\nPRODUCES the allergy list with severity and reaction",
    )
    assert fired("manifest-line-bounds", view(seed_style)) == []
    assert fired("rag-description-shape", view(seed_style)) == []
