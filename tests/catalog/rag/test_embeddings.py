"""What the worker re-embeds: exactly the tools whose embedded text changed, never a duplicate row."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.models import Finding, Tool, ToolEmbedding
from catalog.rag.domain.phrases import PHRASE_SCHEME, tool_phrases
from catalog.rag.selectors.vectors import embeddable_tools, embedding_status, tools_needing_vectors, vectors_pending
from catalog.rag.services.siblings import sibling_findings_refresh
from catalog.rag.services.vectors import embeddings_refresh
from catalog.rag.tasks import embed_tools, sweep_embeddings

from .conftest import CountingEmbedder, pieces_of
from .test_embedding_imports import demo_condor, find, reimport

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_embedded(shared_demo_embedded: None) -> None:
    """The demo, imported and embedded once for the module (tests/catalog/rag/conftest.py)."""


def test_a_redelivered_task_embeds_nothing(counting_embedder: CountingEmbedder, demo_embedded: None) -> None:
    ids = list(Tool.objects.filter(system="condor").values_list("pk", flat=True)[:5])
    counting_embedder.calls.clear()
    assert embed_tools(ids) == 0
    assert counting_embedder.calls == []


def test_the_sweep_queues_missing_and_stale_vectors_and_a_new_model_counts_as_missing(
    counting_embedder: CountingEmbedder, demo_embedded: None
) -> None:
    vitals = Tool.objects.get(system="condor", declared_id="listVitals")
    ToolEmbedding.objects.filter(tool=vitals).update(text_sha256="0" * 64)  # stale
    ToolEmbedding.objects.filter(tool__declared_id="recordVitals").delete()  # missing
    status = embedding_status()
    assert (status.stale, status.missing) == (1, 1)
    counting_embedder.calls.clear()
    assert sweep_embeddings() == 2
    assert counting_embedder.texts == pieces_of(vitals, Tool.objects.get(system="condor", declared_id="recordVitals"))
    assert embedding_status().stale == embedding_status().missing == 0

    other_model = tools_needing_vectors(model_id="another-model@1")
    assert len(other_model) == Tool.objects.live().exclude(rag_text_sha256="").count()


def test_status_is_counted_once_per_change_and_needing_is_one_query(demo_embedded: None) -> None:
    counted = embedding_status()
    assert counted.stale == counted.missing == 0 and counted.embedded == counted.total > 0
    with CaptureQueriesContext(connection) as queries:
        assert embedding_status() == counted
    assert len(queries) == 2  # the catalog's version and the model's newest vector: no count while neither moves
    with CaptureQueriesContext(connection) as queries:
        tools_needing_vectors()
    assert len(queries) == 1
    # A vector re-made for a text the tool no longer has (as a worker racing an import could leave it): counted again.
    row = ToolEmbedding.objects.order_by("pk").first()
    assert row is not None
    ToolEmbedding.objects.filter(pk=row.pk).update(text_sha256="0" * 64, embedded_at=timezone.now())
    after = embedding_status()
    assert (after.embedded, after.stale) == (counted.embedded - 1, 1)


def test_the_demo_siblings_are_flagged_on_both_tools(demo_embedded: None) -> None:
    for system in ("condor", "tucan"):
        sibling_findings_refresh(system)
    flagged = {(f.tool.declared_id, f.details["other"]) for f in Finding.objects.filter(rule="sibling-near-duplicate")}
    # The demo plants two tools with the same ragDescription + keywords in each system.
    assert ("listVisits", "listEncounters") in flagged and ("listEncounters", "listVisits") in flagged
    assert ("list-encounters", "list-fhir-encounters") in flagged
    message = Finding.objects.filter(rule="sibling-near-duplicate", tool__declared_id="listVisits").get().message
    assert "listEncounters" in message and "anti-synonyms" in message


def test_an_import_keeps_sibling_findings_of_tools_whose_text_did_not_change(
    demo_embedded: None, django_capture_on_commit_callbacks: Any, counting_embedder: CountingEmbedder
) -> None:
    sibling_findings_refresh("condor")
    manifest = demo_condor()
    find(manifest, "recordVitals")["retryClass"] = "none"
    reimport(manifest, django_capture_on_commit_callbacks)
    assert Finding.objects.filter(rule="sibling-near-duplicate", tool__declared_id="listVisits").exists()


def test_refresh_skips_tools_without_text(counting_embedder: CountingEmbedder, demo_embedded: None) -> None:
    tool = Tool.objects.filter(system="condor").first()
    assert tool is not None
    Tool.objects.filter(pk=tool.pk).update(rag_text_sha256="")
    counting_embedder.calls.clear()
    result = embeddings_refresh([tool.pk])
    assert result.embedded == [] and counting_embedder.calls == []


def test_a_redelivered_batch_still_completes_its_system(
    counting_embedder: CountingEmbedder, demo_embedded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed after embedding but before the findings: the redelivery embeds nothing and refreshes."""
    Finding.objects.filter(rule="sibling-near-duplicate").delete()
    ids = list(Tool.objects.filter(system="condor").live().values_list("pk", flat=True)[:8])
    counting_embedder.calls.clear()
    assert embed_tools(ids) == 0 and counting_embedder.texts == 0
    assert Finding.objects.filter(rule="sibling-near-duplicate", tool__declared_id="listVisits").exists()


def test_a_vector_made_before_phrases_keeps_serving_and_the_sweep_adds_its_phrases(
    counting_embedder: CountingEmbedder, demo_embedded: None
) -> None:
    vitals = Tool.objects.get(system="condor", declared_id="listVitals")
    row = ToolEmbedding.objects.get(tool=vitals)
    phrases = tool_phrases(vitals.rag_description, vitals.rag_keywords)
    assert len(row.phrases) == len(phrases.all) * row.dim * 4  # float32, positives then negatives
    assert phrases.negative and all("DO NOT USE" not in p for p in phrases.all)
    ToolEmbedding.objects.filter(tool=vitals).update(phrases=b"", phrase_scheme=0)  # as the upgrade leaves it
    assert embedding_status().stale == 1 and tools_needing_vectors() == [vitals.pk]
    counting_embedder.calls.clear()
    assert sweep_embeddings() == 1
    assert counting_embedder.texts == pieces_of(vitals)
    row = ToolEmbedding.objects.get(tool=vitals)
    assert row.phrase_scheme == PHRASE_SCHEME and len(row.phrases) == len(phrases.all) * row.dim * 4


def test_pending_is_read_just_after_the_batch_first_and_over_the_system_otherwise(demo_embedded: None) -> None:
    """Asked after every batch: the next batch's tools wait right after it (one read of a window of ids); a tool
    waiting anywhere else is still found (a read of the whole system), and nothing waiting is answered false."""
    ids = sorted(embeddable_tools().filter(system="condor").values_list("pk", flat=True))
    assert not vectors_pending("condor", after=ids[0])
    ToolEmbedding.objects.filter(tool_id=ids[-1]).delete()
    with CaptureQueriesContext(connection) as queries:
        assert vectors_pending("condor", after=ids[-2])  # in the window after the batch: one query
    assert len(queries) == 1
    with CaptureQueriesContext(connection) as queries:
        assert vectors_pending("condor", after=ids[-1])  # past the window's start: the whole system is read
    assert len(queries) == 2
    assert vectors_pending("condor") and not vectors_pending("tucan", after=ids[-2])
