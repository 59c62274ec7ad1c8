"""The watcher keeps a process's retrieval index current between requests (issue 24, "No stall after a change"):
after an import or the worker's vectors commit, the index in hand is updated before the next resolution asks, which
then reads only the two freshness rows and answers like any warm one."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.core.cache import catalog_version
from catalog.models import Tool
from catalog.rag import embedders
from catalog.rag.selectors import index as index_module
from catalog.rag.selectors.index import keep_current, rag_index
from catalog.rag.selectors.resolution import snapshot_resolve
from catalog.rag.selectors.vectors import vectors_version
from catalog.rag.services.vectors import embeddings_refresh
from catalog.services.imports import catalog_import
from tests.catalog.rag.conftest import DEMO, import_demo
from tests.conftest import requires_postgres

PROMPT = "Patient per Telefonnummer finden"


def _with_phone_lookup() -> bytes:
    doc = json.loads((DEMO / "condor.json").read_bytes())
    new = json.loads(json.dumps(next(t for t in doc["tools"] if t["id"] == "searchPatients")))
    new.update(id="findPatientByPhone", aliases=[])
    new["ragDescription"] = "USE WHEN: the user gives a phone number and the patient must be identified."
    new["ragKeywords"] = {"en": ["patient by phone"], "de": ["Patient per Telefonnummer"]}
    doc["tools"].append(new)
    return json.dumps(doc).encode()


def _until(done: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.02)
    return done()


def _current(model_id: str) -> bool:
    index = index_module._cached
    version = (catalog_version(), model_id, vectors_version(model_id))
    return index is not None and index.version == version and index.exact


@pytest.fixture
def watching(settings: Any) -> Iterator[str]:
    settings.CONDOR_RAG_INDEX_WATCH_SECONDS = 0.1
    index_module.forget()
    yield embedders.get_embedder().model_id
    index_module.stop_watching()
    index_module.forget()


@pytest.mark.django_db(transaction=True)  # the watcher is another thread: it sees only what is committed
def test_after_an_import_the_next_resolve_finds_the_index_already_updated(watching: str) -> None:
    model_id = watching
    import_demo()
    embeddings_refresh(list(Tool.objects.live().values_list("pk", flat=True)))
    before = snapshot_resolve(prompt=PROMPT, profile="demo")  # builds the index and starts the watcher
    assert "findPatientByPhone" not in {h.tool.declared_id for h in before.ranking}
    assert index_module._watcher is not None and index_module._watcher[1].is_alive()

    catalog_import(raw=_with_phone_lookup(), via="test")
    embeddings_refresh(list(Tool.objects.live().filter(declared_id="findPatientByPhone").values_list("pk", flat=True)))
    assert _until(lambda: _current(model_id)), "the watcher did not bring the index up to date"

    with CaptureQueriesContext(connection) as queries:
        after = snapshot_resolve(prompt=PROMPT, profile="demo")
    # Only the freshness check (catalog version, newest vector): the update was made before the request.
    assert len(queries) == 2, [q["sql"][:100] for q in queries.captured_queries]
    assert after.ranking[0].tool.declared_id == "findPatientByPhone"


@pytest.mark.django_db
def test_keep_current_updates_only_an_index_a_resolution_asked_for(demo_embedded: None) -> None:
    index_module.forget()
    model_id = embedders.get_embedder().model_id
    assert keep_current(model_id) is False and index_module._cached is None  # nothing built ahead of a request
    snapshot_resolve(prompt=PROMPT, profile="demo")  # ranks over condor's newest view
    assert keep_current(model_id) is False  # current: nothing to do
    catalog_import(raw=_with_phone_lookup(), via="test")
    embeddings_refresh(list(Tool.objects.live().filter(declared_id="findPatientByPhone").values_list("pk", flat=True)))
    assert keep_current(model_id) is True
    condor = rag_index(model_id).systems["condor"]
    assert "findPatientByPhone" in {t.declared_id for t in condor.tools}
    # What the first resolution would compute on demand over the new view is made already: the lexical norms
    # (the served rows changed: every row's norm moves with the idf) and the demo profile's eligibility.
    assert condor.lexical.has_norms and "demo" in condor._eligible
    assert keep_current("another-model") is False  # another model's index is not built by the watcher
    index_module.forget()


def test_no_watcher_starts_when_it_is_off(settings: Any) -> None:
    settings.CONDOR_RAG_INDEX_WATCH_SECONDS = 0
    index_module.stop_watching()
    index_module.watch_from_here("any-model")
    assert index_module._watcher is None


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_through_a_database_outage_the_watcher_logs_once_and_catches_up_after(
    watching: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The database refuses the watcher for several rounds (its connection ended, new ones refused) while an import
    commits: the outage is logged once, not once a round; when connections are let in again the watcher logs that
    the index is current again and has it updated before the next resolution asks."""
    model_id = watching
    import_demo()
    embeddings_refresh(list(Tool.objects.live().values_list("pk", flat=True)))
    snapshot_resolve(prompt=PROMPT, profile="demo")  # builds the index and starts the watcher
    assert _until(lambda: any(t.name == "rag-index-watch" for t in threading.enumerate()))
    caplog.set_level(logging.WARNING, logger=index_module.__name__)
    # Another session turns new connections away (a database cannot do it to itself); this test's own
    # connection stays open, the watcher's is ended.
    params = {**connection.get_connection_params(), "dbname": "postgres", "autocommit": True}
    database = connection.settings_dict["NAME"]
    with psycopg.connect(**params) as admin:
        try:
            admin.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS false')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> %s",
                (database, connection.connection.info.backend_pid),
            )
            catalog_import(raw=_with_phone_lookup(), via="test")
            embeddings_refresh(
                list(Tool.objects.live().filter(declared_id="findPatientByPhone").values_list("pk", flat=True))
            )
            time.sleep(1.5)  # fifteen of the watcher's 0.1-s rounds, each refused
            assert not _current(model_id)
        finally:
            admin.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true')
    assert _until(lambda: _current(model_id)), "the watcher did not catch up after the outage"

    def said() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == index_module.__name__]

    # The watcher logs once the update it made is in place: on a loaded machine this thread can see the index
    # current a moment before that line is written.
    _until(lambda: said()[-1:] == ["rag index watcher: the index is current again"], seconds=5)
    messages = said()
    failed = [m for m in messages if "the update failed" in m]
    assert len(failed) == 1, messages
    assert messages[-1] == "rag index watcher: the index is current again"

    with CaptureQueriesContext(connection) as queries:
        after = snapshot_resolve(prompt=PROMPT, profile="demo")
    assert len(queries) == 2 and after.ranking[0].tool.declared_id == "findPatientByPhone"
