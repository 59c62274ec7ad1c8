"""The snapshot's order and the ladder, as the seed states them (pure functions)."""

from __future__ import annotations

from catalog.domain.snapshot import (
    ALWAYS_INCLUDE,
    RAG_RETRIEVED,
    Proposed,
    candidate_set_id,
    order_candidates,
    shed_to_budget,
)

REGISTRY = {
    "visit.recording.card": "visit.recording.card",
    "read.attachment": "readAttachment",
    "list.vitals": "listVitals",
    "record.vitals": "recordVitals",
    "search.patients": "searchPatients",
    "demo.only": "demoOnly",
}
ELIGIBLE = {k: k != "demo.only" for k in REGISTRY}


def test_policy_additions_lead_and_rag_hits_follow_by_rank() -> None:
    ordered = order_candidates(
        policy_additions=[Proposed("readAttachment", "forced-floor:attachments-floor")],
        rag_hits=[Proposed("recordVitals", RAG_RETRIEVED, 0.4, 2), Proposed("listVitals", RAG_RETRIEVED, 0.5, 1)],
        registry=REGISTRY,
        eligible=ELIGIBLE,
    )
    assert [c.key for c in ordered.candidates] == ["read.attachment", "list.vitals", "record.vitals"]


def test_a_hit_keeps_its_rag_reason_under_its_canonical_key() -> None:
    ordered = order_candidates(
        policy_additions=[],
        rag_hits=[Proposed("visitRecordingCard", RAG_RETRIEVED, 0.6, 1)],
        registry=REGISTRY,
        eligible=ELIGIBLE,
    )
    [candidate] = ordered.candidates
    assert candidate.key == "visit.recording.card"
    assert candidate.reasons == [RAG_RETRIEVED]
    assert candidate.score == 0.6


def test_duplicates_collapse_keeping_every_reason_at_the_policy_position() -> None:
    ordered = order_candidates(
        policy_additions=[
            Proposed("list_vitals", "forced-floor:intake-floor"),
            Proposed("searchPatients", ALWAYS_INCLUDE),
        ],
        rag_hits=[Proposed("search-patients", RAG_RETRIEVED, 0.7, 1), Proposed("listVitals", RAG_RETRIEVED, 0.3, 2)],
        registry=REGISTRY,
        eligible=ELIGIBLE,
    )
    assert [c.key for c in ordered.candidates] == ["list.vitals", "search.patients"]
    assert ordered.candidates[0].reasons == ["forced-floor:intake-floor", RAG_RETRIEVED]
    assert ordered.candidates[1].reasons == [ALWAYS_INCLUDE, RAG_RETRIEVED]
    assert ordered.candidates[1].rank == 1


def test_unknown_and_ineligible_ids_are_dropped_and_reported() -> None:
    ordered = order_candidates(
        policy_additions=[
            Proposed("noSuchTool", "forced-floor:attachments-floor"),
            Proposed("demoOnly", ALWAYS_INCLUDE),
        ],
        rag_hits=[],
        registry=REGISTRY,
        eligible=ELIGIBLE,
    )
    assert ordered.candidates == []
    assert [d.tool_id for d in ordered.dropped] == ["noSuchTool", "demoOnly"]
    assert "not in the registry" in ordered.dropped[0].reason
    assert "not plan-eligible" in ordered.dropped[1].reason


def test_the_ladder_sheds_rag_hits_from_the_tail_and_floors_last() -> None:
    ordered = order_candidates(
        policy_additions=[Proposed("readAttachment", "forced-floor:attachments-floor")],
        rag_hits=[
            Proposed(t, RAG_RETRIEVED, 0.5 - i / 10, i + 1) for i, t in enumerate(["listVitals", "recordVitals"])
        ],
        registry=REGISTRY,
        eligible=ELIGIBLE,
    )
    sizes = {"read.attachment": 200, "list.vitals": 150, "record.vitals": 150}
    kept, shed = shed_to_budget(ordered.candidates, sizes, 360)
    assert [c.key for c in kept] == ["read.attachment", "list.vitals"]
    assert [c.key for c in shed] == ["record.vitals"]
    kept, shed = shed_to_budget(ordered.candidates, sizes, 199)
    assert kept == []  # the floor goes only after every RAG hit, and only when it alone is over budget
    assert [c.key for c in shed] == ["record.vitals", "list.vitals", "read.attachment"]
    kept, shed = shed_to_budget(ordered.candidates, sizes, 200)
    assert [c.key for c in kept] == ["read.attachment"]


def test_no_budget_sheds_nothing() -> None:
    ordered = order_candidates(
        policy_additions=[],
        rag_hits=[Proposed("listVitals", RAG_RETRIEVED, 0.5, 1)],
        registry=REGISTRY,
        eligible=ELIGIBLE,
    )
    kept, shed = shed_to_budget(ordered.candidates, {"list.vitals": 500}, None)
    assert [c.key for c in kept] == ["list.vitals"] and shed == []


def test_candidate_set_id_is_stable_and_depends_on_order_and_revision() -> None:
    a = candidate_set_id(["list.vitals", "record.vitals"], ["condor", 3])
    assert a == candidate_set_id(["list.vitals", "record.vitals"], ["condor", 3])
    assert a != candidate_set_id(["record.vitals", "list.vitals"], ["condor", 3])
    assert a != candidate_set_id(["list.vitals", "record.vitals"], ["condor", 4])
