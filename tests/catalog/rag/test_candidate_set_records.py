"""How resolve's candidate sets are stored (catalog.rag.services.candidate_sets): a known set is one UPDATE, a new
one an UPDATE and an INSERT, and a set keeps the profile it was last served for."""

from __future__ import annotations

from typing import Any

from catalog.models import CandidateSet
from catalog.rag.domain.resolution import Snapshot
from catalog.rag.services.candidate_sets import candidate_set_record


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
