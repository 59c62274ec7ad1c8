"""Every string and list a manifest brings has a documented bound (TOOLS.md, "Bounds"), tool ids and slugs
have a character set, and a repeated JSON key is refused: each with its location, in both dialects (pure)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catalog.domain.manifest import ManifestError, load_manifest, parse_manifest
from catalog.domain.manifest.base import (
    ALIASES_MAX,
    DESCRIPTION_MAX,
    FRAGMENT_MAX,
    KEYWORD_MAX,
    KEYWORDS_MAX,
    SCHEMA_BYTES_MAX,
    SCHEMA_DEPTH_MAX,
    TEAMS_MAX,
)


def problems_of(data: Any) -> list[str]:
    with pytest.raises(ManifestError) as info:
        parse_manifest(data)
    return info.value.problems


@pytest.mark.parametrize(
    ("field", "limit"),
    [
        ("ragDescription", DESCRIPTION_MAX),
        ("instructionFragment", FRAGMENT_MAX),
        ("stylingFragment", FRAGMENT_MAX),
        ("outputInstructions", FRAGMENT_MAX),
    ],
)
def test_a_condor_text_past_its_bound_is_refused_and_one_at_it_is_not(manifests: Any, field: str, limit: int) -> None:
    at = manifests.condor([manifests.condor_tool("listAllergies", **{field: "a" * limit})], forcedFloors=[])
    assert parse_manifest(at).tools[0].declared_id == "listAllergies"
    past = manifests.condor([manifests.condor_tool("listAllergies", **{field: "a" * (limit + 1)})], forcedFloors=[])
    assert problems_of(past) == [f"tools[0].{field}: at most {limit} characters, got {limit + 1} (tool listAllergies)"]


def test_a_ten_megabyte_rag_description_is_refused_with_a_short_message(manifests: Any) -> None:
    """The review's reproduction: 10 MB of text under the 32 MB manifest cap once imported and killed the
    process that embedded it."""
    raw = manifests.encode(
        manifests.condor([manifests.condor_tool("listAllergies", ragDescription="x" * 10_000_000)], forcedFloors=[])
    )
    with pytest.raises(ManifestError) as info:
        load_manifest(raw)
    assert info.value.problems == [
        f"tools[0].ragDescription: at most {DESCRIPTION_MAX} characters, got 10000000 (tool listAllergies)"
    ]


def test_keywords_are_bounded_in_number_and_length(manifests: Any) -> None:
    many = {"en": [f"word {i}" for i in range(KEYWORDS_MAX + 1)], "de": ["k" * (KEYWORD_MAX + 1)]}
    assert problems_of(
        manifests.condor([manifests.condor_tool("listAllergies", ragKeywords=many)], forcedFloors=[])
    ) == [
        f"tools[0].ragKeywords.en: at most {KEYWORDS_MAX} items, got {KEYWORDS_MAX + 1} (tool listAllergies)",
        f"tools[0].ragKeywords.de[0]: at most {KEYWORD_MAX} characters, got {KEYWORD_MAX + 1} (tool listAllergies)",
    ]
    flat = manifests.tucan([manifests.tucan_tool("show-modal", ragKeywords=["k"] * (KEYWORDS_MAX + 1))])
    assert problems_of(flat) == [
        f"tools[0].metadata.ragKeywords: at most {KEYWORDS_MAX} items, got {KEYWORDS_MAX + 1} (tool show-modal)"
    ]


def test_aliases_are_bounded_and_spelled_like_ids(manifests: Any) -> None:
    aliases = [f"allergies.list{i}" for i in range(ALIASES_MAX + 1)]
    assert problems_of(
        manifests.condor([manifests.condor_tool("listAllergies", aliases=aliases)], forcedFloors=[])
    ) == [f"tools[0].aliases: at most {ALIASES_MAX} items, got {ALIASES_MAX + 1} (tool listAllergies)"]
    bad = manifests.condor([manifests.condor_tool("listAllergies", aliases=["list allergies"])], forcedFloors=[])
    assert problems_of(bad) == [
        "tools[0].aliases[0]: 'list allergies' may contain only letters A-Z, digits and _ . - "
        "(and not start with . or -) (tool listAllergies)"
    ]


@pytest.mark.parametrize(
    "tool_id",
    [
        '=HYPERLINK("http://evil.example","x")',
        "<script>alert(1)</script>",
        "list\nAllergies",
        "../../etc/passwd",
        "-listAllergies",
        "@listAllergies",
        "+listAllergies",
        "list allergies",
        "listAllergiés",
        "list/allergies",
    ],
)
def test_a_tool_id_outside_the_seeds_alphabet_is_refused(manifests: Any, tool_id: str) -> None:
    for manifest in (
        manifests.condor([manifests.condor_tool(tool_id)], forcedFloors=[]),
        manifests.tucan([manifests.tucan_tool(tool_id)]),
    ):
        problems = problems_of(manifest)
        assert problems[0].startswith(f"tools[0].id: {tool_id!r} may contain only letters A-Z, digits and _ . -")


@pytest.mark.parametrize(
    "tool_id", ["prescribeMedication", "list_allergies", "show-modal", "visit.recording.card", "_x"]
)
def test_every_spelling_the_seeds_use_is_accepted(manifests: Any, tool_id: str) -> None:
    assert parse_manifest(manifests.condor([manifests.condor_tool(tool_id)], forcedFloors=[])).tools


def test_slugs_have_a_character_set(manifests: Any) -> None:
    manifest = manifests.condor(
        [manifests.condor_tool("listAllergies", module="med ication", policyDomain="=cmd")], forcedFloors=[]
    )
    manifest["teams"][0]["id"] = "meds<b>"
    problems = problems_of(manifest)
    assert (
        "teams[0].id: 'meds<b>' may contain only letters A-Z, digits and _ . - (and start with a letter or digit)"
        in (problems)
    )
    assert any(p.startswith("tools[0].module: 'med ication' may contain only") for p in problems)
    assert any(p.startswith("tools[0].policyDomain: '=cmd' may contain only") for p in problems)


def test_a_section_list_past_its_bound_is_refused(manifests: Any) -> None:
    team = {"id": "t", "name": "T", "oncall": "@t", "channel": "#t", "escalation": "page"}
    manifest = manifests.condor(teams=[{**team, "id": f"t{i}"} for i in range(TEAMS_MAX + 1)])
    assert f"teams: at most {TEAMS_MAX} items, got {TEAMS_MAX + 1}" in problems_of(manifest)


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    while depth > 1:
        schema = {"type": "object", "properties": {"x": schema}}
        depth -= 2
    return schema


def test_an_input_schema_is_bounded_in_depth_and_size(manifests: Any) -> None:
    deep = nested(SCHEMA_DEPTH_MAX + 3)
    assert problems_of(manifests.tucan([manifests.tucan_tool("show-modal") | {"inputSchema": deep}])) == [
        f"tools[0].inputSchema: nested at most {SCHEMA_DEPTH_MAX} levels deep, got {SCHEMA_DEPTH_MAX + 3} "
        "(tool show-modal)"
    ]
    ok = nested(SCHEMA_DEPTH_MAX - 1)
    assert parse_manifest(manifests.tucan([manifests.tucan_tool("show-modal") | {"inputSchema": ok}])).tools
    big = {"type": "object", "description": "d" * SCHEMA_BYTES_MAX}
    problems = problems_of(manifests.tucan([manifests.tucan_tool("show-modal") | {"inputSchema": big}]))
    assert problems[0].startswith(f"tools[0].inputSchema: at most {SCHEMA_BYTES_MAX} bytes as compact JSON, got ")


def test_a_repeated_json_key_is_refused_where_it_is(manifests: Any) -> None:
    """Last-one-wins would let a manifest show a reviewer one tier and import another."""
    text = json.dumps(manifests.condor())
    text = text.replace('"hitlTier": "high"', '"hitlTier": "high", "hitlTier": "low"', 1)
    with pytest.raises(ManifestError) as info:
        load_manifest(text.encode())
    assert info.value.problems == [
        "tools[0].hitlTier: the key appears more than once in this object; JSON readers keep only one of them, "
        "so say it once"
    ]
    top = '{"format": "condor-catalog/v1", "format": "tucan-tools/v1", "tools": []}'
    with pytest.raises(ManifestError) as info:
        load_manifest(top.encode())
    assert info.value.problems[0].startswith("format: the key appears more than once")
