"""A resolution over a hand-built index, with no database and no embedder: plain values in, a snapshot out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from catalog.rag.domain.cases import CasesError, load_cases
from catalog.rag.domain.index import (
    CURRENT,
    MISSING,
    NO_TEXT,
    STALE,
    IndexedProfile,
    IndexedTool,
    SystemIndex,
    vector_state,
)
from catalog.rag.domain.resolution import POLICY_ONLY, TOOL_RAG, Request, assemble_snapshot, why_not

CLINICAL = IndexedProfile("clinical-production", "condor", ["production"], [])


def tool(declared_id: str, key: str, *, row: int | None, state: str = CURRENT, **axes: object) -> IndexedTool:
    values: dict[str, object] = {
        "plane": "business",
        "availability": "production",
        "always_include": False,
        "rag_description": f"USE WHEN: {declared_id}",
        "description": declared_id,
        "instruction_fragment": None,
        "input_schema": None,
    }
    values.update(axes)
    return IndexedTool(
        pk=row or 0,
        system="condor",
        declared_id=declared_id,
        key=key,
        has_text=state != NO_TEXT,
        row=row,
        vector_state=state,
        **values,
    )


def index() -> SystemIndex:
    """Three tools with current vectors (record.vitals along x, list.vitals along y, a demo-only tool between
    them), and one tool in each other state."""
    record = tool("recordVitals", "record.vitals", row=0)
    listing = tool("listVitals", "list.vitals", row=1)
    demo = tool("demoOnly", "demo.only", row=2, availability="demo")
    tools = [
        record,
        listing,
        demo,
        tool("readAttachment", "read.attachment", row=None, state=MISSING),
        tool("oldTool", "old.tool", row=None, state=STALE),
        tool("quietTool", "quiet.tool", row=None, state=NO_TEXT),
        tool("resolveReferent", "resolve.referent", row=None, state=MISSING, plane="planner-control"),
    ]
    return SystemIndex(
        tools=tools,
        by_key={t.key: t for t in tools},
        matrix=np.array([[1.0, 0.0], [0.0, 1.0], [0.7071, 0.7071]], dtype=np.float32),
        rows=[record, listing, demo],
        floors=[("attachments-floor", "attachments", ["readAttachment"])],
        revision=7,
    )


def request(query: list[float] | None, **overrides: object) -> Request:
    values: dict[str, object] = {
        "system": "condor",
        "profile": CLINICAL,
        "model_id": "test-model@1",
        "query": None if query is None else np.array(query, dtype=np.float32),
        "attachments": False,
        "multi_entity_intake": False,
        "top_k": 2,
        "min_score": 0.1,
        "byte_budget": None,
    }
    values.update(overrides)
    return Request(**values)


def test_the_prompt_ranks_by_cosine_and_a_triggered_floor_leads() -> None:
    snapshot = assemble_snapshot(index(), request([0.6, 0.8], attachments=True))
    assert snapshot.tool_ids == ["read.attachment", "list.vitals", "record.vitals"]
    assert snapshot.activation_reasons["read.attachment"] == ["forced-floor:attachments-floor"]
    # the demo-only tool is nearer the prompt than either, but not eligible under the clinical profile
    assert [(h.tool.key, h.rank) for h in snapshot.ranking] == [("list.vitals", 1), ("record.vitals", 2)]
    assert snapshot.source == TOOL_RAG
    assert snapshot.total_bytes == sum(snapshot.manifest_bytes.values())


def test_the_same_request_gives_the_same_candidate_set_id() -> None:
    assert (
        assemble_snapshot(index(), request([1.0, 0.0])).candidate_set_id
        == assemble_snapshot(index(), request([1.0, 0.0])).candidate_set_id
    )


def test_with_no_query_only_policy_additions_are_offered() -> None:
    empty = SystemIndex(tools=[], by_key={}, matrix=np.zeros((0, 1), dtype=np.float32), rows=[], floors=[], revision=1)
    assert assemble_snapshot(empty, request(None)).source == POLICY_ONLY
    snapshot = assemble_snapshot(index(), request(None, attachments=True))
    assert snapshot.tool_ids == ["read.attachment"] and snapshot.ranking == []


def test_why_not_names_the_step_that_kept_a_tool_out() -> None:
    snapshot = assemble_snapshot(index(), request([1.0, 0.0], top_k=1, min_score=0.5))
    assert why_not(snapshot, "recordVitals").startswith("recordVitals is in the set at position 1")
    assert "below the top 1" in why_not(snapshot, "listVitals")
    assert "no vector yet" in why_not(snapshot, "readAttachment")
    assert "stale" in why_not(snapshot, "oldTool")
    assert "no ragDescription or ragKeywords" in why_not(snapshot, "quietTool")
    assert "only business tools are candidates" in why_not(snapshot, "resolveReferent")
    assert "not plan-eligible under the profile clinical-production" in why_not(snapshot, "demoOnly")
    assert "not a live condor tool" in why_not(snapshot, "noSuchTool")
    below_minimum = assemble_snapshot(index(), request([1.0, 0.0], top_k=2, min_score=0.5))
    assert "below the minimum 0.50" in why_not(below_minimum, "listVitals")


def test_a_byte_budget_sheds_and_why_not_says_so() -> None:
    full = assemble_snapshot(index(), request([0.6, 0.8], attachments=True))
    budget = full.total_bytes - 1
    tight = assemble_snapshot(index(), request([0.6, 0.8], attachments=True, byte_budget=budget))
    assert tight.tool_ids == ["read.attachment", "list.vitals"]  # the tail RAG hit goes first; the floor stays
    assert "shed by the byte budget" in why_not(tight, "recordVitals")


def test_a_vector_is_current_only_when_made_from_the_text_the_tool_has_now() -> None:
    assert vector_state("abc", "abc") == CURRENT
    assert vector_state("abc", "old") == STALE
    assert vector_state("abc", None) == MISSING
    assert vector_state("", None) == vector_state("", "abc") == NO_TEXT


def test_a_case_file_problem_names_the_case_and_field(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"format": "condor-retrieval-cases/v1", "cases": [{"id": "c1", "prompt": "x"}]}))
    with pytest.raises(CasesError, match=r"cases.json: cases\[0\]: missing or malformed field 'expected'"):
        load_cases(path)
    path.write_text(json.dumps({"format": "other/v1", "cases": []}))
    with pytest.raises(CasesError, match="format must be 'condor-retrieval-cases/v1'"):
        load_cases(path)
