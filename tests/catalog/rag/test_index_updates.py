"""The resolve index after a catalog change: only the changed tools are read again, the index answers at once
(patched to the new catalog, never serving a declaration that is gone) and the exact index it then builds ranks
exactly like one built from nothing (issue 24, "No stall after a change")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Tool
from catalog.rag import embedders
from catalog.rag.selectors import index as index_module
from catalog.rag.selectors.index import rag_index, refresh
from catalog.rag.selectors.resolution import snapshot_resolve
from catalog.rag.services.vectors import embeddings_refresh
from catalog.services.imports import catalog_import
from tests.catalog.rag.conftest import DEMO
from tests.conftest import sign_off

PROMPTS = ("Patient suchen Müller", "Wie hat sich der Blutdruck entwickelt?", "list encounters of the last year")
PROFILES = ("clinical-production", "clinical-preview", "demo")


@pytest.fixture
def demo_embedded(shared_demo_embedded: None) -> None:
    """The demo with its vectors, built once for this module (tests/catalog/rag/conftest.py)."""


def _forget() -> None:
    index_module.forget()


@pytest.fixture(autouse=True)
def _fresh_index() -> Iterator[None]:
    _forget()
    yield
    _forget()


def _ranked() -> list[Any]:
    """What every profile is served for every prompt: the tools, and the ranking with its scores."""
    seen: list[Any] = []
    for profile in PROFILES:
        for prompt in PROMPTS:
            s = snapshot_resolve(prompt=prompt, profile=profile)
            # With what each ranked tool is served as: a clinical profile must never see a declaration not in effect.
            ranking = [(h.tool.declared_id, h.tool.availability, _served(h.tool), h.score, h.rank) for h in s.ranking]
            seen.append((profile, prompt, s.tool_ids, ranking, s.activation_reasons))
    return seen


def _served(tool: Any) -> tuple[Any, ...]:
    return (tool.rag_description, tool.description, tool.instruction_fragment, json.dumps(tool.input_schema))


def _manifest() -> dict[str, Any]:
    return json.loads((DEMO / "condor.json").read_bytes())


def _tool(doc: dict[str, Any], declared_id: str) -> dict[str, Any]:
    return next(t for t in doc["tools"] if t["id"] == declared_id)


def _added(doc: dict[str, Any]) -> None:
    new = json.loads(json.dumps(_tool(doc, "searchPatients")))
    new["id"] = "findPatientByPhone"
    new["aliases"] = []
    new["ragDescription"] = "USE WHEN: the user gives a phone number and the patient must be identified."
    new["ragKeywords"] = {"en": ["patient by phone"], "de": ["Patient per Telefonnummer"]}
    doc["tools"].append(new)


def _text_changed(doc: dict[str, Any]) -> None:
    _tool(doc, "listEncounters")["ragDescription"] = "USE WHEN: the user asks for every hospital stay of a patient."


def _mutating_text(doc: dict[str, Any]) -> None:
    # Weakening (the text of a mutating tool): it awaits sign-off, so what is in effect differs from the newest.
    _tool(doc, "prescribeMedication")["ragDescription"] = "USE WHEN: the clinician prescribes a drug for a patient."


def _retired(doc: dict[str, Any]) -> None:
    doc["tools"] = [t for t in doc["tools"] if t["id"] != "listVisits"]


def _availability(doc: dict[str, Any]) -> None:
    _tool(doc, "searchPatients")["availability"] = "demo-only"


CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "a tool added": _added,
    "a tool's text changed": _text_changed,
    "a mutating tool's text changed": _mutating_text,
    "a tool retired": _retired,
    "a tool's availability changed": _availability,
}


def _import(change: Callable[[dict[str, Any]], None], *, signed: bool) -> set[int]:
    """Import the demo catalog with `change`, embed what it changed (as the worker does) and return the pks the
    revision touched."""
    doc = _manifest()
    change(doc)
    result = catalog_import(raw=json.dumps(doc).encode(), via="test")
    if signed:
        sign_off("condor")
    touched = set(
        Tool.objects.filter(last_changed_revision__number__gt=1, system="condor").values_list("pk", flat=True)
    )
    touched |= set(Tool.objects.filter(retired_in__isnull=False, system="condor").values_list("pk", flat=True))
    embeddings_refresh(sorted(pk for pk in touched if Tool.objects.filter(pk=pk, retired_in__isnull=True).exists()))
    assert result.system == "condor"
    return touched


@pytest.mark.parametrize("signed", [False, True], ids=["awaiting sign-off", "signed off"])
@pytest.mark.parametrize("name", list(CHANGES))
def test_an_index_updated_after_a_change_ranks_exactly_like_a_fresh_build(
    demo_embedded: None, name: str, signed: bool
) -> None:
    _ranked()  # the index before the change, kept
    touched = _import(CHANGES[name], signed=signed)
    updated = _ranked()
    part = index_module._catalog_part
    # Updated, not rebuilt: no system was read whole, tucan's tools not at all, condor's only where they changed.
    assert part is not None and "condor" not in part.whole and "tucan" not in part.whole
    assert touched <= part.changed["condor"] and not part.changed["tucan"]
    if name in ("a tool's text changed", "a mutating tool's text changed", "a tool's availability changed"):
        assert part.changed["condor"] == touched  # the same tools, only the changed one read again
    _forget()
    assert updated == _ranked()


def test_the_update_reads_only_the_changed_tools(demo_embedded: None) -> None:
    model_id = embedders.get_embedder().model_id
    rag_index(model_id)
    touched = _import(_text_changed, signed=True)
    with CaptureQueriesContext(connection) as queries:
        rag_index(model_id)
    part = index_module._catalog_part
    assert part is not None and part.changed == {"condor": touched, "tucan": set()} and len(touched) == 1
    tool_reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('SELECT "catalog_tool"."id"')]
    assert len(tool_reads) == 1 and "last_changed_revision_id" in tool_reads[0]  # the changed tools, by revision
    # catalog and vector versions, the revisions (with the live-tool count that checks the part), the changed
    # tools, profiles, forced floors and what was signed off of them (catalog.selectors.served), and the vectors:
    # the rows made since, every row of the tools among them, their count check and the one changed text's blob.
    assert len(queries) <= 11, [q["sql"][:120] for q in queries.captured_queries]


@pytest.mark.parametrize("name", list(CHANGES))
def test_after_a_change_the_index_answers_at_once_from_the_new_catalog(
    demo_embedded: None, name: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the background mode the first resolution after an import is served by the previous index patched to the
    new catalog: the new declarations and eligibility (a retired tool is gone, an availability applies at once),
    while the exact index is built; once built, it ranks like a fresh build."""
    settings.CONDOR_RAG_INDEX_BACKGROUND = True
    started: list[str] = []
    monkeypatch.setattr(index_module, "start_refresh", started.append)
    model_id = embedders.get_embedder().model_id
    _ranked()
    _import(CHANGES[name], signed=True)
    interim = _ranked()
    index = rag_index(model_id)
    assert not index.exact and started  # answered from the patched index; the exact one is on its way
    live = set(Tool.objects.live().filter(system="condor").values_list("canonical_key", flat=True))
    live |= set(Tool.objects.live().filter(system="condor").values_list("declared_id", flat=True))
    for profile, _, tool_ids, ranking, _ in interim:
        assert set(tool_ids) <= live and {r[0] for r in ranking} <= live
        if profile != "demo" and name == "a tool's availability changed":
            assert "searchPatients" not in tool_ids and all(r[0] != "searchPatients" for r in ranking)
    condor = index.systems["condor"]
    assert set(condor.by_key) == set(
        Tool.objects.live().filter(system="condor").values_list("canonical_key", flat=True)
    )
    refresh(model_id, close=False)
    assert rag_index(model_id).exact
    exact = _ranked()
    _forget()
    assert exact == _ranked()


def test_a_sign_off_serves_what_is_now_in_effect_at_once(
    demo_embedded: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A weakening change awaits sign-off: clinical profiles keep the declaration in effect until the sign-off, and
    the patched index serves the signed-off one as soon as it is signed."""
    settings.CONDOR_RAG_INDEX_BACKGROUND = True
    monkeypatch.setattr(index_module, "start_refresh", lambda model_id: None)
    model_id = embedders.get_embedder().model_id
    _ranked()
    _import(_availability, signed=False)
    before = rag_index(model_id).served("condor", clinical=True)
    assert before is not None
    sign_off("condor")
    after = rag_index(model_id).served("condor", clinical=True)
    assert after is not None and not rag_index(model_id).exact
    expected = Tool.objects.get(system="condor", declared_id="searchPatients").in_effect
    assert expected is not None
    assert after.by_key[_key("searchPatients")].availability == expected["availability"]
    refresh(model_id, close=False)
    exact = _ranked()
    _forget()
    assert exact == _ranked()


def _key(declared_id: str) -> str:
    return Tool.objects.get(system="condor", declared_id=declared_id).canonical_key
