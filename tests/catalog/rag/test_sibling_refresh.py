"""The sibling refresh after a change: incremental (only the changed tools' rows scored), equal to a full
recompute, once per change; and `reembed --all` never leaves resolution without vectors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.db.models import F

from catalog.management.commands import reembed
from catalog.models import Finding, Tool, ToolEmbedding
from catalog.rag import embedders
from catalog.rag.domain.siblings import SiblingDelta
from catalog.rag.selectors.vectors import embeddable_tools
from catalog.rag.services import siblings, vectors
from catalog.rag.services.siblings import sibling_findings_refresh, siblings_mark_stale
from catalog.rag.tasks import sweep_embeddings
from catalog.services.imports import catalog_import

from .conftest import DEMO

CLUSTER = ("listVisits", "listEncounters", "listVitals", "recordVitals", "listAllergies")


@pytest.fixture
def demo_embedded(shared_demo_embedded: None) -> None:
    """The demo with its vectors, built once for this module (tests/catalog/rag/conftest.py)."""


def stored() -> set[tuple[str, str, float, str]]:
    rows = Finding.objects.filter(rule="sibling-near-duplicate").values_list("tool__declared_id", "details", "message")
    return {(tool, d["other"], d["cosine"], message) for tool, d, message in rows}


def import_with(django_capture_on_commit_callbacks: Any, texts: dict[str, str], stale: Sequence[str] = ()) -> None:
    """Import the demo's Condor catalog with these ragDescriptions; the import's contract: mark the tools whose
    text changed (and so their stored siblings) stale before it drops their sibling findings."""
    manifest = json.loads((DEMO / "condor.json").read_text())
    for tool in manifest["tools"]:
        if tool["id"] in texts:
            tool["ragDescription"], tool["ragKeywords"] = texts[tool["id"]], {"en": ["same"], "de": ["gleich"]}
    with django_capture_on_commit_callbacks(execute=True):
        siblings_mark_stale("condor", stale)
        catalog_import(raw=json.dumps(manifest).encode(), via="test")


@pytest.mark.django_db
def test_an_incremental_refresh_after_a_change_equals_a_full_recompute(
    demo_embedded: None, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Five templated tools with one text: each names its three nearest, so a tool leaving the cluster changes
    # which siblings the others name.
    same = "USE WHEN: the user asks for the patient's record of visits, vitals and allergies."
    import_with(django_capture_on_commit_callbacks, dict.fromkeys(CLUSTER, same))
    assert len({(a, b) for a, b, _, _ in stored() if a in CLUSTER and b in CLUSTER}) > 10
    deltas: list[tuple[int, SiblingDelta]] = []
    real = siblings.sibling_delta

    def recorded(matrix: np.ndarray, changed: Sequence[int], *args: Any, **kw: Any) -> SiblingDelta:
        deltas.append((len(matrix), delta := real(matrix, changed, *args, **kw)))
        return delta

    monkeypatch.setattr(siblings, "sibling_delta", recorded)
    # The cluster's first tool leaves it (the others each named it among their three nearest, so now each names
    # another), and an unrelated tool changes too.
    leaving = Tool.objects.filter(system="condor", declared_id__in=CLUSTER).order_by("pk").first()
    assert leaving is not None
    moved = {leaving.declared_id: "USE WHEN: the user asks for a radiology image.", "listLabResults": "Laborwerte."}
    import_with(django_capture_on_commit_callbacks, {**dict.fromkeys(CLUSTER, same), **moved}, stale=sorted(moved))
    incremental = stored()
    (tools, delta), *more = deltas
    assert not more  # one refresh for the change
    assert delta.rows_scored <= 8 < tools  # the changed two and the cluster one left (their partners): not 81
    assert not any(leaving.declared_id in (a, b) for a, b, _, _ in incremental)
    sibling_findings_refresh("condor")
    assert stored() == incremental


@pytest.mark.django_db
def test_a_lost_refresh_is_scheduled_by_the_sweep(demo_embedded: None) -> None:
    for system in ("condor", "tucan"):
        sibling_findings_refresh(system)
    before = stored()
    ToolEmbedding.objects.filter(tool__system="condor").update(siblings_checked=False)  # a refresh that never ran
    Finding.objects.filter(rule="sibling-near-duplicate", system="condor").delete()
    sweep_embeddings()
    assert stored() == before
    assert not ToolEmbedding.objects.filter(tool__system="condor", siblings_checked=False).exists()


class WatchingEmbedder:
    """The configured embedder, noting before each batch how many tools resolution has a current vector for."""

    def __init__(self, inner: embedders.Embedder) -> None:
        self.inner, self.model_id = inner, inner.model_id
        self.served: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.served.append(current_vector_count(self.model_id))
        return self.inner.embed(texts)


def current_vector_count(model_id: str) -> int:
    return ToolEmbedding.objects.filter(
        model_id=model_id, tool__retired_in__isnull=True, text_sha256=F("tool__rag_text_sha256")
    ).count()


@pytest.mark.django_db
def test_reembed_all_replaces_vectors_in_place_and_resolution_keeps_them_throughout(
    demo_embedded: None, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    watching = WatchingEmbedder(embedders.get_embedder())
    for module in (embedders, vectors, reembed):
        monkeypatch.setattr(module, "get_embedder", lambda: watching)
    settings.CONDOR_EMBED_BATCH = 32
    total = embeddable_tools().count()
    old = dict(ToolEmbedding.objects.values_list("pk", "embedded_at"))
    call_command("reembed", "--all", stdout=open("/dev/null", "w"), stderr=open("/dev/null", "w"))
    assert len(watching.served) > 3  # several batches, and before each every tool still had its vector
    assert watching.served == [total] * len(watching.served)
    assert set(old) == set(ToolEmbedding.objects.values_list("pk", flat=True))  # the same rows, replaced
    assert all(ToolEmbedding.objects.get(pk=pk).embedded_at > at for pk, at in list(old.items())[:5])
    assert Tool.objects.filter(system="condor", findings__rule="sibling-near-duplicate").exists()
