"""What the worker re-embeds when a catalog is imported or re-imported: each tool once, in a few batched calls, and
then exactly the tools whose embedded text changed."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from catalog.models import Finding, Tool, ToolEmbedding
from catalog.rag import tasks
from catalog.rag.selectors.vectors import embedding_status
from catalog.services.imports import catalog_import

from .conftest import DEMO, CountingEmbedder, pieces_of

pytestmark = pytest.mark.django_db


def demo_condor() -> dict[str, Any]:
    return json.loads((DEMO / "condor.json").read_text())


def reimport(manifest: dict[str, Any], django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        catalog_import(raw=json.dumps(manifest).encode(), via="test")


def find(manifest: dict[str, Any], tool_id: str) -> dict[str, Any]:
    return next(t for t in manifest["tools"] if t["id"] == tool_id)


def test_an_import_embeds_every_tool_once_in_a_few_batched_calls(
    counting_embedder: CountingEmbedder, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.CONDOR_EMBED_BATCH = 32
    reimport(demo_condor(), django_capture_on_commit_callbacks)
    tools = list(Tool.objects.live().exclude(rag_text_sha256=""))
    live = len(tools)
    assert counting_embedder.texts == pieces_of(*tools)  # each text and each of its phrases, once
    assert len(counting_embedder.calls) == -(-live // 32)  # batches, not one call per tool
    status = embedding_status()
    assert (status.embedded, status.stale, status.missing) == (live, 0, 0)


def test_changing_one_ragdescription_re_embeds_exactly_that_tool(
    counting_embedder: CountingEmbedder, django_capture_on_commit_callbacks: Any
) -> None:
    manifest = demo_condor()
    reimport(manifest, django_capture_on_commit_callbacks)
    before = dict(ToolEmbedding.objects.values_list("tool__declared_id", "text_sha256"))
    counting_embedder.calls.clear()

    changed = copy.deepcopy(manifest)
    find(changed, "listVitals")["ragDescription"] += " Includes the respiratory rate."
    reimport(changed, django_capture_on_commit_callbacks)

    assert len(counting_embedder.calls) == 1
    [texts] = counting_embedder.calls
    vitals = Tool.objects.get(system="condor", declared_id="listVitals")
    assert len(texts) == pieces_of(vitals) and "respiratory rate" in texts[0]
    assert "Includes the respiratory rate." in texts  # the new sentence is a phrase of its own
    after = dict(ToolEmbedding.objects.values_list("tool__declared_id", "text_sha256"))
    assert {k for k in after if after[k] != before[k]} == {"listVitals"}
    assert ToolEmbedding.objects.count() == len(before)  # updated in place, not duplicated


def test_changing_a_keyword_re_embeds_but_a_non_embedded_field_does_not(
    counting_embedder: CountingEmbedder, django_capture_on_commit_callbacks: Any
) -> None:
    manifest = demo_condor()
    reimport(manifest, django_capture_on_commit_callbacks)
    counting_embedder.calls.clear()

    only_owner_facing = copy.deepcopy(manifest)
    find(only_owner_facing, "listVitals")["outputInstructions"] = "Show the newest reading first."
    find(only_owner_facing, "recordVitals")["retryClass"] = "none"
    reimport(only_owner_facing, django_capture_on_commit_callbacks)
    assert counting_embedder.calls == []

    keyword = copy.deepcopy(only_owner_facing)
    find(keyword, "recordVitals")["ragKeywords"]["de"].append("Puls eintragen")
    reimport(keyword, django_capture_on_commit_callbacks)
    record = Tool.objects.get(system="condor", declared_id="recordVitals")
    assert [len(c) for c in counting_embedder.calls] == [pieces_of(record)]
    assert "Puls eintragen" in counting_embedder.calls[0][0] and "Puls eintragen" in counting_embedder.calls[0]


def test_sibling_findings_are_refreshed_once_by_the_batch_that_completes_the_system(
    counting_embedder: CountingEmbedder,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Refreshing after every batch made the follow-on work of an import grow with the square of its size."""
    refreshed: list[tuple[str, int]] = []
    real = tasks.sibling_findings_update

    def counted(system: str, **kw: Any) -> int:
        refreshed.append((system, checked := real(system, **kw)))
        return checked

    monkeypatch.setattr(tasks, "sibling_findings_update", counted)
    settings.CONDOR_EMBED_BATCH = 16
    reimport(demo_condor(), django_capture_on_commit_callbacks)
    assert len(counting_embedder.calls) > 3  # several batches …
    assert [system for system, _ in refreshed] == ["condor"]  # … one refresh, after the last
    assert Finding.objects.filter(rule="sibling-near-duplicate", tool__declared_id="listVisits").exists()
    assert tasks.refresh_siblings("condor") == 0  # a duplicate refresh finds nothing left to check
