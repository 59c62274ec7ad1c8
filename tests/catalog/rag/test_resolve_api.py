"""POST /api/v1/rag/resolve as the runtime calls it, on the demo catalog with real vectors."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import Max
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.domain.budget import manifest_line_of
from catalog.models import Tool, ToolEmbedding
from catalog.rag.selectors import index as index_module
from catalog.rag.selectors.index import rag_index
from catalog.rag.selectors.vectors import vectors_version

URL = "/api/v1/rag/resolve"


@pytest.fixture
def demo_embedded(shared_demo_embedded: None) -> None:
    """The demo with its vectors, built once for this module (tests/catalog/rag/conftest.py)."""


def test_a_clinicians_prompt_retrieves_the_tool_it_needs(resolve: Callable[..., Any]) -> None:
    snapshot = resolve(prompt="Blutdruck und Puls eintragen")
    assert "record.vitals" in snapshot["toolIds"]
    assert snapshot["activationReasons"]["record.vitals"] == ["rag-retrieved"]
    assert snapshot["source"] == "tool-rag"
    assert snapshot["candidateSetId"].startswith("cs_")
    first = snapshot["candidates"][0]
    assert first["rank"] == 1 and first["score"] > 0
    assert 120 <= first["manifestBytes"] <= 300
    assert snapshot["totalBytes"] == sum(c["manifestBytes"] for c in snapshot["candidates"])
    assert snapshot["ragDescriptions"]["record.vitals"].startswith("USE WHEN")


def test_the_same_request_gives_the_same_snapshot_id(resolve: Callable[..., Any]) -> None:
    a = resolve(prompt="show the medication list")
    b = resolve(prompt="show the medication list")
    assert a["candidateSetId"] == b["candidateSetId"] and a["toolIds"] == b["toolIds"]


def test_floors_lead_the_set_when_their_trigger_is_set(resolve: Callable[..., Any]) -> None:
    plain = resolve(prompt="list the vitals", topK=3)
    assert not any(r.startswith("forced-floor") for rs in plain["activationReasons"].values() for r in rs)
    snapshot = resolve(prompt="list the vitals", topK=3, attachments=True, multiEntityIntake=True)
    ids = snapshot["toolIds"]
    # attachments floor, then the intake floor (the demo's declared order), then the RAG hits
    assert ids[:2] == ["read.attachment", "extract.document.text"]
    assert ids[2:6] == ["list.vitals", "record.vitals", "list.allergies", "list.active.medications"]
    assert snapshot["activationReasons"]["list.vitals"][0] == "forced-floor:intake-floor"
    assert "rag-retrieved" in snapshot["activationReasons"]["list.vitals"]  # a hit keeps its reason too
    assert len(ids) == len(set(ids))


def test_a_byte_budget_sheds_rag_hits_from_the_tail_before_any_floor(resolve: Callable[..., Any]) -> None:
    full = resolve(prompt="Termin nächste Woche buchen", topK=8, attachments=True)
    floor_bytes = sum(c["manifestBytes"] for c in full["candidates"][:2])
    budget = floor_bytes + full["candidates"][2]["manifestBytes"]
    tight = resolve(prompt="Termin nächste Woche buchen", topK=8, attachments=True, byteBudget=budget)
    assert tight["toolIds"] == full["toolIds"][:3]
    assert [s["toolId"] for s in tight["shed"]] == list(reversed(full["toolIds"][3:]))
    assert tight["totalBytes"] <= budget
    assert tight["candidateSetId"] != full["candidateSetId"]


def test_demo_only_tools_are_not_candidates_under_the_clinical_profile(resolve: Callable[..., Any]) -> None:
    prompt = "generate a demo patient for the training session"
    clinical = resolve(prompt=prompt, topK=10, whyNot=["generateDemoPatient"])
    assert "generate.demo.patient" not in clinical["toolIds"]
    assert "not plan-eligible under the profile clinical-production" in clinical["whyNot"]["generateDemoPatient"]
    demo = resolve(prompt=prompt, profile="demo", topK=10)
    assert "generate.demo.patient" in demo["toolIds"]


def test_why_not_names_the_filter(resolve: Callable[..., Any]) -> None:
    snapshot = resolve(
        prompt="Blutdruck eintragen", topK=2, whyNot=["resolveReferent", "noSuchTool", "createInvoiceDraft"]
    )
    why = snapshot["whyNot"]
    assert "only business tools are candidates" in why["resolveReferent"]
    assert "not a live condor tool" in why["noSuchTool"]
    assert "below the top 2" in why["createInvoiceDraft"] and "ranked" in why["createInvoiceDraft"]


def test_a_stale_vector_is_not_retrieved_and_why_not_says_so(resolve: Callable[..., Any]) -> None:
    ToolEmbedding.objects.filter(tool__declared_id="recordVitals").update(text_sha256="0" * 64)
    snapshot = resolve(prompt="Blutdruck und Puls eintragen", whyNot=["recordVitals"])
    assert "record.vitals" not in snapshot["toolIds"]
    assert "stale" in snapshot["whyNot"]["recordVitals"]


def test_refusals_say_what_to_fix(resolve: Callable[..., Any], client: Client) -> None:
    assert "not a catalog profile" in resolve(422, prompt="x", profile="nope")["detail"]
    assert resolve(422, prompt="x", topK=0)["errors"]
    assert resolve(422, prompt="")["errors"]
    assert "no imported catalog" in resolve(422, prompt="x", system="nope")["detail"]
    assert "prompt" in " ".join(resolve(422, prompt="Blutdruck \ud800")["errors"])  # a lone surrogate is no text
    anonymous = client.post(URL, {"prompt": "x", "profile": "demo"}, content_type="application/json")
    assert anonymous.status_code == 401


def test_a_token_without_the_rag_scope_is_refused(demo_embedded: None, make_token: Any, client: Client) -> None:
    token = make_token("catalog-only", scopes=("catalog:read",))
    response = client.post(
        URL,
        {"prompt": "x", "profile": "demo"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code in (401, 403)


def test_a_warm_resolve_reads_little(resolve: Callable[..., Any]) -> None:
    resolve(prompt="warm the index")
    with CaptureQueriesContext(connection) as queries:
        resolve(prompt="Blutdruck eintragen")
    # token lookup + catalog version + vectors version; the index itself is cached in process; the served set
    # remembered (an UPDATE, and an INSERT the first time it is served)
    assert len(queries) <= 5, [q["sql"] for q in queries.captured_queries]
    with CaptureQueriesContext(connection) as again:
        resolve(prompt="Blutdruck eintragen")
    assert len(again) <= 4, [q["sql"] for q in again.captured_queries]  # served before: the UPDATE alone


def test_the_cached_index_is_rebuilt_when_a_vector_is_re_embedded(resolve: Callable[..., Any]) -> None:
    """The index is kept while its version holds: the catalog's, and the newest vector's time and id."""
    model_id = ToolEmbedding.objects.values_list("model_id", flat=True).first()
    assert model_id is not None
    expected = ToolEmbedding.objects.filter(model_id=model_id).aggregate(last=Max("embedded_at"), top=Max("pk"))
    assert vectors_version(model_id) == (expected["last"], expected["top"])
    assert vectors_version("no-such-model") == (None, None)
    resolve(prompt="Blutdruck eintragen")
    before = rag_index(model_id)
    assert rag_index(model_id) is before
    ToolEmbedding.objects.filter(pk=expected["top"]).update(embedded_at=expected["last"] + timedelta(seconds=1))
    assert rag_index(model_id) is not before


def test_each_candidate_carries_the_manifest_line_of_its_declaration(resolve: Callable[..., Any]) -> None:
    for prompt in ("Blutdruck eintragen", "prescribe amoxicillin"):  # the second call reuses the index's lines
        snapshot = resolve(prompt=prompt)
        assert snapshot["candidates"]
        for candidate in snapshot["candidates"]:
            tool = Tool.objects.live().get(system=snapshot["system"], declared_id=candidate["declaredId"])
            line = manifest_line_of(tool)
            assert (candidate["manifestLine"], candidate["manifestBytes"]) == (line.text, line.bytes)


def test_a_rebuild_after_one_tool_changes_fetches_and_prepares_that_tool_only(resolve: Callable[..., Any]) -> None:
    """The index keeps each tool text's vectors and lexical row: one re-embedded tool is one blob read."""
    resolve(prompt="Blutdruck eintragen")
    model_id = ToolEmbedding.objects.values_list("model_id", flat=True).first()
    assert model_id is not None
    vitals = ToolEmbedding.objects.get(tool__declared_id="recordVitals")
    before = rag_index(model_id).systems["condor"]
    ToolEmbedding.objects.filter(pk=vitals.pk).update(embedded_at=vitals.embedded_at + timedelta(seconds=5))
    with CaptureQueriesContext(connection) as queries:
        rebuilt = rag_index(model_id)
    blob_reads = [q["sql"] for q in queries.captured_queries if '"phrases"' in q["sql"]]
    assert len(blob_reads) == 1 and str(vitals.pk) in blob_reads[0]
    after = rebuilt.systems["condor"]
    assert after.table is not None and before.table is not None and after.table.origin is before.table.origin
    assert after.table.used == before.table.used + 1  # one slot appended: the re-made vector
    moved = [t.declared_id for t in after.tools if t is not before.by_key[t.key]]
    assert moved == ["recordVitals"]  # every other tool is the same object, on the same slot
    key = Tool.objects.get(system="condor", declared_id="recordVitals").canonical_key
    assert after.by_key[key].row == before.table.used
    assert rebuilt.systems["condor"].phrases.count > len(rebuilt.systems["condor"].tools)  # phrases came along


def test_each_ranked_candidate_carries_its_signals_and_why_not_shows_them(resolve: Callable[..., Any]) -> None:
    snapshot = resolve(prompt="Wie hat sich der Blutdruck über die Monate entwickelt?", whyNot=["chargeBill"])
    ranked = [c for c in snapshot["candidates"] if "rag-retrieved" in c["activationReasons"]]
    assert ranked and all(set(c["signals"]) == {"whole", "phrase", "lexical"} for c in ranked)
    top = ranked[0]
    assert top["rank"] == 1 and all(s["rank"] >= 1 for s in top["signals"].values())
    assert "get.vitals.trend" in snapshot["toolIds"]
    why = snapshot["whyNot"]["chargeBill"]
    assert "whole text" in why and "best phrase" in why and "shared words" in why
    # A tool the prompt shares no words with is told which of the prompt's words it lacks.
    assert "add the prompt's own words (Blutdruck, Monate, entwickelt) to its ragKeywords" in why


def test_while_a_rebuild_runs_a_vector_change_serves_the_index_it_replaces_but_a_catalog_change_waits(
    resolve: Callable[..., Any],
) -> None:
    resolve(prompt="Blutdruck eintragen")
    model_id = ToolEmbedding.objects.values_list("model_id", flat=True).first()
    assert model_id is not None
    before = rag_index(model_id)
    vitals = ToolEmbedding.objects.get(tool__declared_id="recordVitals")
    ToolEmbedding.objects.filter(pk=vitals.pk).update(embedded_at=vitals.embedded_at + timedelta(seconds=5))
    holding, release = threading.Event(), threading.Event()

    def rebuilding_elsewhere() -> None:  # another request's rebuild holds the lock for a while
        with index_module._lock:
            holding.set()
            release.wait(10)

    other = threading.Thread(target=rebuilding_elsewhere)
    other.start()
    holding.wait(10)
    started = time.monotonic()
    assert rag_index(model_id) is before  # only vectors changed: served at once
    assert time.monotonic() - started < 1
    index_module._cached = replace(before, version=(("another catalog",), *before.version[1:]))
    threading.Timer(0.6, release.set).start()
    started = time.monotonic()
    rebuilt = rag_index(model_id)  # the catalog is not the one the kept index was built from: it waits
    assert time.monotonic() - started >= 0.5
    other.join(10)
    assert rebuilt is not before and rebuilt.version[0] == before.version[0]


def test_a_vector_of_another_phrase_scheme_serves_its_whole_text_but_no_phrases(resolve: Callable[..., Any]) -> None:
    """After an upgrade (or a change of how phrases are cut) a row's phrase vectors may not line up with today's
    phrases: until the sweep re-embeds it, the tool is ranked by its whole text and words only."""
    ToolEmbedding.objects.filter(tool__declared_id="recordVitals").update(phrase_scheme=0)
    snapshot = resolve(prompt="Blutdruck und Puls eintragen")
    vitals = next(c for c in snapshot["candidates"] if c["toolId"] == "record.vitals")
    assert vitals["signals"]["phrase"]["score"] is None
    assert vitals["signals"]["whole"]["score"] > 0.1
