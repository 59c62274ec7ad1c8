"""The demo retrieval cases (catalog/demo/retrieval_cases.json) stay answerable and honest.

Every expected tool must be a business tool of the case's system that is plan-eligible under the case's
profile: otherwise retrieval is scored against a tool the planner could never be offered. And no prompt may
quote one of its expected tool's multi-word keyword phrases verbatim, or the figures measure string overlap
rather than retrieval.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from catalog.domain.manifest import Manifest, load_manifest
from catalog.domain.profiles import is_plan_eligible
from tests.conftest import ROOT

DEMO = ROOT / "catalog" / "demo"
CASE_KEYS = {"id", "prompt", "language", "system", "profile", "attachments", "multiEntityIntake", "expected", "split"}


def load_cases() -> dict[str, Any]:
    return json.loads((DEMO / "retrieval_cases.json").read_text(encoding="utf-8"))


CASES: list[dict[str, Any]] = load_cases()["cases"]


@cache
def manifest(system: str) -> Manifest:
    return load_manifest((DEMO / f"{system}.json").read_bytes())


def case_ids() -> list[str]:
    return [case["id"] for case in CASES]


def test_file_declares_its_format_and_enough_cases() -> None:
    data = load_cases()
    assert data["format"] == "condor-retrieval-cases/v1"
    assert len(CASES) >= 100
    assert sum(1 for c in CASES if c["system"] == "condor") >= 80
    assert sum(1 for c in CASES if c["system"] == "tucan") >= 20


def test_both_languages_are_present_in_both_systems() -> None:
    for system in ("condor", "tucan"):
        assert {c["language"] for c in CASES if c["system"] == system} == {"en", "de"}, system


def test_case_ids_are_unique() -> None:
    ids = case_ids()
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert duplicates == []


@pytest.mark.parametrize("case", CASES, ids=case_ids())
def test_case_has_exactly_the_declared_keys_and_values(case: dict[str, Any]) -> None:
    assert set(case) == CASE_KEYS
    assert case["prompt"].strip()
    assert case["language"] in ("en", "de")
    assert case["system"] in ("condor", "tucan")
    assert isinstance(case["attachments"], bool) and isinstance(case["multiEntityIntake"], bool)
    assert case["expected"] and all(isinstance(tool_id, str) and tool_id for tool_id in case["expected"])
    if case["system"] == "tucan":
        # TUCAN has neither profiles nor forced floors.
        assert case["profile"] is None
        assert not case["attachments"] and not case["multiEntityIntake"]


@pytest.mark.parametrize("case", CASES, ids=case_ids())
def test_expected_tools_are_plan_eligible_business_tools(case: dict[str, Any]) -> None:
    catalog = manifest(case["system"])
    tools = {tool.declared_id: tool for tool in catalog.tools}
    if case["system"] == "condor":
        profiles = {profile.id: profile for profile in catalog.profiles}
        assert case["profile"] in profiles, f"{case['id']}: unknown profile {case['profile']!r}"
        availabilities, includes = profiles[case["profile"]].availability, profiles[case["profile"]].include
    else:
        availabilities, includes = ["production"], []
    for tool_id in case["expected"]:
        assert tool_id in tools, f"{case['id']}: {tool_id} is not declared in {case['system']}.json"
        tool = tools[tool_id]
        assert tool.plane == "business", f"{case['id']}: {tool_id} is {tool.plane}, not a retrieval candidate"
        assert is_plan_eligible(
            plane=tool.plane,
            availability=tool.availability,
            declared_id=tool.declared_id,
            profile_availabilities=availabilities,
            profile_includes=includes,
            same_system=True,  # the case's profile and tools are of one manifest
        ), f"{case['id']}: {tool_id} ({tool.availability}) is not plan-eligible under {case['profile']}"


@pytest.mark.parametrize("case", CASES, ids=case_ids())
def test_prompt_does_not_quote_its_expected_tools_keyword_phrases(case: dict[str, Any]) -> None:
    tools = {tool.declared_id: tool for tool in manifest(case["system"]).tools}
    prompt = case["prompt"].casefold()
    quoted = [
        phrase
        for tool_id in case["expected"]
        for phrases in tools[tool_id].rag_keywords.values()
        for phrase in phrases
        if len(phrase.split()) > 1 and phrase.casefold() in prompt
    ]
    assert quoted == [], f"{case['id']} copies keyword phrases; paraphrase as a clinician would type it"


def test_forced_floor_cases_exist_for_both_triggers() -> None:
    condor = [c for c in CASES if c["system"] == "condor"]
    assert any(c["attachments"] for c in condor)
    assert any(c["multiEntityIntake"] for c in condor)


def test_the_held_back_part_is_reported_per_language_from_enough_cases_in_both_systems() -> None:
    # The quality page and eval_retrieval report held back apart, per language: each cell needs enough cases to
    # mean something (one case moves recall by a fiftieth at most), and both catalogs must be in it.
    assert {c["split"] for c in CASES} == {"tune", "held-back"}
    for language in ("en", "de"):
        held_back = [c for c in CASES if c["split"] == "held-back" and c["language"] == language]
        assert len(held_back) >= 50, language
        assert {c["system"] for c in held_back} == {"condor", "tucan"}, language
