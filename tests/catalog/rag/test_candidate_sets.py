"""Resolve remembers what it served: each candidate set it answers is kept (catalog.models.CandidateSet), with the
canonical keys of its tools in order, so the approvals gate and the telemetry ingest can check a call against it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.utils import timezone

from catalog.models import CandidateSet
from catalog.rag.domain.resolution import Snapshot
from catalog.rag.services.candidate_sets import candidate_set_record


def test_a_served_set_is_remembered_with_its_tools_in_order(resolve: Callable[..., Any]) -> None:
    before = timezone.now()
    snapshot = resolve(prompt="Blutdruck und Puls eintragen", attachments=True)
    row = CandidateSet.objects.get(set_id=snapshot["candidateSetId"])
    assert row.tool_keys == snapshot["toolIds"] and row.tool_keys[0] == "read.attachment"  # floors lead, as served
    assert (row.system, row.profile) == (snapshot["system"], "clinical-production")
    assert row.created_at >= before and row.last_served_at == row.created_at


def test_serving_a_set_again_moves_its_time_and_adds_no_row(resolve: Callable[..., Any]) -> None:
    first = resolve(prompt="show the medication list")
    row = CandidateSet.objects.get(set_id=first["candidateSetId"])
    CandidateSet.objects.filter(pk=row.pk).update(last_served_at=row.last_served_at - timedelta(hours=5))
    again = resolve(prompt="show the medication list")
    assert again["candidateSetId"] == first["candidateSetId"]
    assert CandidateSet.objects.count() == 1
    moved = CandidateSet.objects.get(pk=row.pk)
    assert moved.last_served_at > row.last_served_at and moved.created_at == row.created_at


def test_each_different_set_is_its_own_row(resolve: Callable[..., Any]) -> None:
    a = resolve(prompt="Termin nächste Woche buchen", topK=8)
    b = resolve(prompt="Termin nächste Woche buchen", topK=3)
    assert a["candidateSetId"] != b["candidateSetId"]
    assert set(CandidateSet.objects.values_list("set_id", flat=True)) == {a["candidateSetId"], b["candidateSetId"]}


def test_a_refused_resolve_remembers_nothing(resolve: Callable[..., Any]) -> None:
    resolve(expect=422, prompt="anything", profile="no-such-profile")
    assert not CandidateSet.objects.exists()


def _snapshot(set_id: str, keys: list[str], profile: str = "demo") -> Snapshot:
    return Snapshot(
        candidate_set_id=set_id,
        source="tool-rag",
        model_id="m",
        system="condor",
        profile=profile,
        catalog_revision=1,
        tool_ids=keys,
        candidates=[],
        rag_descriptions={},
        activation_reasons={},
        manifest_lines={},
        manifest_bytes={},
        total_bytes=0,
    )


def test_recording_takes_one_query_for_a_known_set_and_two_for_a_new_one(
    db: None, django_assert_num_queries: Any
) -> None:
    snapshot = _snapshot("cs_" + "a" * 32, ["list.vitals", "record.vitals"])
    with django_assert_num_queries(2):  # the UPDATE that finds nothing, the INSERT
        candidate_set_record(snapshot=snapshot)
    with django_assert_num_queries(1):
        candidate_set_record(snapshot=snapshot)
    assert list(CandidateSet.objects.values_list("tool_keys", flat=True)) == [["list.vitals", "record.vitals"]]


def test_a_set_served_for_another_profile_is_kept_for_the_profile_it_was_last_served_for(db: None) -> None:
    """A set id names tools and a catalog revision, not a profile: the row says which profile had it last."""
    set_id = "cs_" + "b" * 32
    candidate_set_record(snapshot=_snapshot(set_id, ["list.vitals"], profile="demo"))
    candidate_set_record(snapshot=_snapshot(set_id, ["list.vitals"], profile="clinical-production"))
    assert CandidateSet.objects.get(set_id=set_id).profile == "clinical-production"
