"""Every class of manifest problem is refused with its JSON location (pure: no database)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.domain.manifest import ManifestError, load_manifest, parse_manifest


def problems_of(data: Any) -> list[str]:
    with pytest.raises(ManifestError) as info:
        parse_manifest(data)
    return info.value.problems


def test_valid_condor_manifest_parses(manifests: Any) -> None:
    manifest = parse_manifest(manifests.condor())
    assert manifest.system == "condor"
    assert [t.declared_id for t in manifest.tools] == ["prescribeMedication", "listActiveMedications"]
    assert manifest.tools[0].hitl_tier == "high"
    assert manifest.profiles[0].clinical is True
    assert manifest.baseline_count == 2


def test_valid_tucan_manifest_maps_to_business_production_without_tier(manifests: Any) -> None:
    manifest = parse_manifest(manifests.tucan())
    prescription = manifest.tools[1]
    assert (prescription.plane, prescription.module, prescription.category) == (
        "business",
        "medications",
        "medications",
    )
    assert prescription.availability == "production"
    assert prescription.mutating is True and prescription.hitl_tier is None and prescription.policy_class is None
    assert prescription.rag_keywords == {"und": ["create-prescription", "create-prescription öffnen"]}


def test_not_json_and_not_utf8_are_located() -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest(b'{"format": ')
    assert info.value.problems[0].startswith("$: not valid JSON")
    with pytest.raises(ManifestError) as info:
        load_manifest(b"\xff\xfe")
    assert info.value.problems[0].startswith("$: not UTF-8")


def test_unknown_format() -> None:
    assert problems_of({"format": "condor-catalog/v9"}) == [
        "format: unknown manifest format 'condor-catalog/v9';"
        " expected one of condor-catalog/v1, mcp-tools/v1, tucan-tools/v1"
    ]
    assert problems_of([1, 2]) == ["$: expected a JSON object, got a list"]


def test_mutate_without_tier_names_location_and_tool(manifests: Any) -> None:
    tools = [
        manifests.condor_tool("listActiveMedications"),
        manifests.mutate_tool("prescribeMedication", hitlTier=None),
    ]
    assert problems_of(manifests.condor(tools)) == [
        "tools[1].hitlTier: required when policyClass is mutate (tool prescribeMedication)"
    ]


def test_read_class_on_mutating_tool_is_refused(manifests: Any) -> None:
    tools = [manifests.condor_tool("listActiveMedications"), manifests.condor_tool("stopMedication", mutating=True)]
    problems = problems_of(manifests.condor(tools))
    assert problems == [
        "tools[1].policyClass: 'read' contradicts mutating: true; "
        "declare 'mutate' with a hitlTier (tool stopMedication)"
    ]


def test_unknown_enum_values(manifests: Any) -> None:
    tool = manifests.condor_tool(
        "listActiveMedications",
        plane="business-plane",
        availability="beta",
        retryClass="always",
        idempotency="maybe",
        hitlTier="medium",
        policyClass="write",
    )
    problems = problems_of(manifests.condor([tool]))
    assert (
        "tools[0].plane: unknown value 'business-plane'; "
        "expected one of business, planner-control, agent-control (tool listActiveMedications)" in problems
    )
    assert any(p.startswith("tools[0].availability: unknown value 'beta'") for p in problems)
    assert any(p.startswith("tools[0].retryClass: unknown value 'always'") for p in problems)
    assert any(p.startswith("tools[0].idempotency: unknown value 'maybe'") for p in problems)
    assert any(p.startswith("tools[0].hitlTier: unknown value 'medium'") for p in problems)
    assert any(p.startswith("tools[0].policyClass: unknown value 'write'") for p in problems)


def test_wrong_types_and_missing_and_unknown_keys(manifests: Any) -> None:
    tool = manifests.condor_tool("listActiveMedications", mutating="yes", aliases="x", plane=None)
    tool["hitlTeir"] = "high"
    problems = problems_of(manifests.condor([tool], forcedFloors=[]))
    assert "tools[0].mutating: expected true or false, got a string (tool listActiveMedications)" in problems
    assert "tools[0].aliases: expected a list, got a string (tool listActiveMedications)" in problems
    assert "tools[0].plane: required key is missing (tool listActiveMedications)" in problems
    assert any(p.startswith("tools[0].hitlTeir: unknown key; allowed keys are") for p in problems)


def test_duplicate_ids(manifests: Any) -> None:
    tools = [manifests.condor_tool("listActiveMedications"), manifests.condor_tool("listActiveMedications")]
    problems = problems_of(manifests.condor(tools))
    assert "tools[1].id: duplicate tool id 'listActiveMedications' (first at tools[0].id)" in problems


def test_duplicate_team_profile_floor_and_rule(manifests: Any) -> None:
    m = manifests.condor()
    m["teams"].append(dict(m["teams"][0]))
    m["profiles"].append(dict(m["profiles"][1]))
    m["forcedFloors"].append(dict(m["forcedFloors"][0]))
    m["ownership"].append(dict(m["ownership"][0]))
    problems = problems_of(m)
    assert "teams[2].id: duplicate team id 'meds' (first at teams[0].id)" in problems
    assert "profiles[2].id: duplicate profile id 'demo' (first at profiles[1].id)" in problems
    assert "forcedFloors[1].id: duplicate forced floor id 'intake' (first at forcedFloors[0].id)" in problems
    assert any(
        p.startswith("ownership[3]: duplicate ownership rule for plane/module 'business/medication'") for p in problems
    )


def test_canonical_key_collision_inside_condor_manifest(manifests: Any) -> None:
    tools = [
        manifests.condor_tool("visitRecordingCard"),
        manifests.condor_tool("visit_recording_card"),
        manifests.condor_tool("listActiveMedications", aliases=["visit-recording-card"]),
    ]
    problems = problems_of(manifests.condor(tools))
    assert problems == [
        "tools[1].id: canonical key 'visit.recording.card' collides with tools[0].id ('visitRecordingCard'); "
        "two spellings of one key would route to one owner",
        "tools[2].aliases[0]: canonical key 'visit.recording.card' collides with tools[0].id ('visitRecordingCard'); "
        "two spellings of one key would route to one owner",
    ]


def test_alias_folding_to_own_key_is_not_a_collision(manifests: Any) -> None:
    tools = [manifests.condor_tool("listActiveMedications", aliases=["list_active_medications"])]
    assert parse_manifest(manifests.condor(tools)).tools[0].aliases == ["list_active_medications"]


def test_tucan_collisions_import_and_are_left_to_findings(manifests: Any) -> None:
    m = manifests.tucan([manifests.tucan_tool("show-notification"), manifests.tucan_tool("show_notification")])
    assert len(parse_manifest(m).tools) == 2


@pytest.mark.parametrize("literal", ["#fff", "rgb(0, 0, 0)", "hsl(0 100% 50%)", "red"])
def test_styling_fragment_colour_literal(manifests: Any, literal: str) -> None:
    tools = [manifests.condor_tool("listActiveMedications", stylingFragment=f"Show the badge in {literal}.")]
    (problem,) = problems_of(manifests.condor(tools))
    assert problem.startswith("tools[0].stylingFragment: raw colour literal")
    assert problem.endswith("(tool listActiveMedications)")


def test_clinical_profile_including_non_production_tool(manifests: Any) -> None:
    tools = [
        manifests.condor_tool("listActiveMedications"),
        manifests.condor_tool("generateDemoPatient", availability="demo-only"),
    ]
    m = manifests.condor(tools)
    m["profiles"][0]["include"] = ["generateDemoPatient"]
    assert problems_of(m) == [
        "profiles[0].include[0]: clinical profile 'clinical-production' includes demo-only tool "
        "'generateDemoPatient'; only production tools may be active under a clinical profile"
    ]


def test_clinical_profile_activating_preview_availability(manifests: Any) -> None:
    m = manifests.condor()
    m["profiles"][0]["availability"] = ["production", "preview"]
    assert problems_of(m) == [
        "profiles[0].availability: a clinical profile activates production tools only (profile clinical-production)"
    ]


def test_references_to_unknown_tools_and_teams(manifests: Any) -> None:
    m = manifests.condor()
    m["forcedFloors"][0]["tools"] = ["readAttachment"]
    m["forcedFloors"][0]["trigger"] = "files"
    m["profiles"][1]["include"] = ["nope"]
    m["ownership"][0]["team"] = "ghosts"
    problems = problems_of(m)
    assert "forcedFloors[0].tools[0]: floor tool 'readAttachment' is not a tool in this manifest" in problems
    assert any(p.startswith("forcedFloors[0].trigger: unknown value 'files'") for p in problems)
    assert "profiles[1].include[0]: included tool 'nope' is not a tool in this manifest" in problems
    assert "ownership[0].team: unknown team 'ghosts'; declare it under teams" in problems


def test_ownership_may_name_a_team_already_known(manifests: Any) -> None:
    m = manifests.tucan(ownership=[{"plane": "business", "module": "ui", "team": "meds"}])
    assert parse_manifest(m, known_team_ids=["meds"]).ownership[0].team == "meds"
    assert problems_of(m) == ["ownership[0].team: unknown team 'meds'; declare it under teams"]


def test_every_problem_is_reported_at_once(manifests: Any) -> None:
    tools = [
        manifests.mutate_tool("prescribeMedication", hitlTier=None),
        manifests.condor_tool("chargeBill", stylingFragment="#f00"),
        manifests.condor_tool("chargeBill"),
    ]
    m = manifests.condor(tools, baselineCount=-1)
    problems = problems_of(m)
    assert len(problems) >= 4
    assert "baselineCount: expected a whole number ≥ 0, got -1" in problems


def test_tucan_tool_problems(manifests: Any) -> None:
    bad = manifests.tucan_tool("open-table-view")
    bad["inputSchema"] = "string"
    bad["metadata"].pop("mutating")
    bad["metadata"]["ragKeywords"] = ["ok", 3]
    problems = problems_of(manifests.tucan([bad], agents=[{"id": "a", "categories": "ui"}]))
    assert "tools[0].inputSchema: expected an object, got a string (tool open-table-view)" in problems
    assert "tools[0].metadata.mutating: required key is missing (tool open-table-view)" in problems
    assert "tools[0].metadata.ragKeywords[1]: expected a string, got a number (tool open-table-view)" in problems
    assert "agents[0].categories: expected a list, got a string" in problems
