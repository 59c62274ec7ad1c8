from __future__ import annotations

import copy
import io
import json
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.db.backends.signals import connection_created

from catalog.core import roles
from catalog.models import ApiToken, CatalogRevision
from catalog.selectors.reviews import UNDECIDED
from catalog.services.imports import catalog_import
from catalog.services.signoff import revision_review


@pytest.fixture(autouse=True, scope="session")
def _fast_hasher() -> None:
    """MD5 for every password the test process sets, also for users that module-scoped data creates before any
    test's `settings` fixture exists (the servers integration tests start keep the real hashers)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True, scope="session")
def _no_index_watcher() -> None:
    """No retrieval-index watcher thread in the test process: a thread cannot see a test's transaction, and would
    poll the test database between tests. The watcher's own tests turn it on (tests/catalog/rag/test_index_watch.py);
    servers the integration tests start run with the default."""
    from django.conf import settings

    settings.CONDOR_RAG_INDEX_WATCH_SECONDS = 0


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """On PostgreSQL, autovacuum leaves the test database's tables alone. Tests write inside transactions they roll
    back, so a table autovacuum visits mid-suite is recorded as holding 0 live rows on hundreds of pages, and the
    planner then takes every later read of it for one row: nested loops over full index scans, which took 20 to 70 s
    over a few hundred tools (the team page's health query; a test's UPDATE of one tool's vectors, whose plan
    `auto_explain` logged with rows=1 on every node). A table never vacuumed is estimated from its size on disk.
    Production keeps autovacuum: its rows commit, so what autovacuum counts is what is there."""
    from django.db import connection

    if connection.vendor == "sqlite":
        with django_db_blocker.unblock():
            _SQLITE_SNAPSHOTS["migrated"] = _sqlite_snapshot()
        return
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT schemaname, tablename FROM pg_tables WHERE schemaname = current_schema()")
        for schema, table in cursor.fetchall():
            cursor.execute(
                f'ALTER TABLE "{schema}"."{table}" SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)'
            )


@pytest.fixture(autouse=True)
def _english_between_tests() -> Iterator[None]:
    """A German request leaves German active in the test thread (the locale middleware activates it); service
    messages are translated now, so the next test would read German. Each test starts and ends in English."""
    from django.utils import translation

    translation.activate("en")
    yield
    translation.activate("en")


def forget_caches() -> None:
    """Drop every per-process cache of the catalog: the approvals gate's index, the resolve index, the telemetry's
    name index. They are keyed by the catalog's version; a test that edits rows without a new revision (and is
    rolled back) would otherwise leave the next test of its module a value derived from its edit."""
    from approvals.catalog_index import forget as forget_gate
    from catalog.cards.selectors.exports import bundles_forget
    from catalog.rag.selectors.index import forget as forget_rag
    from catalog.selectors import catalog, dashboard, owners
    from catalog.selectors.floors import tier_floors_forget
    from catalog.usage.catalog_index import forget as forget_usage

    forget_gate()
    forget_rag()
    forget_usage()
    tier_floors_forget()
    bundles_forget()
    for kept in (owners._INDEX, dashboard._TOOL_COUNTS, catalog._KEPT):
        kept.forget()


@contextmanager
def module_transaction(django_db_blocker: Any) -> Iterator[None]:
    """A transaction around a whole module's tests, rolled back at its end: data built once (the demo, a large
    catalog) is shared, and each test's own writes are rolled back to it by the savepoint pytest-django's `db`
    opens inside this one (Django's `setUpTestData`, for pytest). Marked as the test case's own atomic block, as
    Django's TestCase marks its class-level one, so the services' `atomic(durable=True)` nests inside it."""
    from django.db import transaction

    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic._from_testcase = True  # type: ignore[attr-defined]
        atomic.__enter__()
        forget_caches()
    try:
        yield
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
            forget_caches()


@pytest.fixture(scope="module")
def demo_once(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """`manage.py load_demo`, once for the module that asks (about 4 s of CPU each time)."""
    from django.core.management import call_command

    with module_transaction(django_db_blocker):
        with django_db_blocker.unblock():
            call_command("load_demo", stdout=io.StringIO())
        yield


# CI runs the suite twice side by side, on SQLite and on PostgreSQL + Redis (.ci/run sets CONDOR_TEST_PASS to
# `sqlite` or `postgresql`). What does not depend on the database runs in one of them only: the browser tests (the
# pages are the same on both) and the heavy tests that walk the demo through every page, role or message. Their home
# pass is chosen to keep the two passes about as long. `make test` without CONDOR_TEST_PASS runs everything.
ONE_PASS = {
    "tests/integration/browser/": "sqlite",
    "tests/test_access_matrix.py": "sqlite",
    "tests/test_i18n_messages.py": "sqlite",
    "tests/catalog/management/test_load_demo.py": "sqlite",
    "tests/catalog/web/test_phone_pages.py": "sqlite",
    "tests/catalog/web/test_console_pages.py": "sqlite",
    # The fuzzer on PostgreSQL, whose text and integer types refuse what SQLite stores (a NUL, a 2**63).
    "tests/test_api_fuzz.py": "postgresql",
}
PASSES = ("sqlite", "postgresql")


def _one_pass(config: Any, items: list[pytest.Item]) -> None:
    this_pass = os.environ.get("CONDOR_TEST_PASS", "")
    if not this_pass:
        return
    if this_pass not in PASSES:
        raise pytest.UsageError(f"CONDOR_TEST_PASS={this_pass!r}: use one of {', '.join(PASSES)} (or leave it unset)")
    elsewhere = [prefix for prefix, home in ONE_PASS.items() if home != this_pass]
    other = [item for item in items if item.nodeid.startswith(tuple(elsewhere))]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [item for item in items if not item.nodeid.startswith(tuple(elsewhere))]


def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    _one_pass(config, items)
    _shared_data_check(items)


def _shared_data_check(items: list[pytest.Item]) -> None:
    """A module that shares data built once (a fixture named `…_once`, on `module_transaction`) must share it with
    every database test in it: a test that did not ask for the data would see it anyway once an earlier test had
    built it (and pass or fail with the order), and a transactional test would flush the module's open
    transaction. Such tests belong in a module of their own."""
    by_module: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_module.setdefault(item.nodeid.split("::")[0], []).append(item)
    for module, its in by_module.items():
        names = [set(getattr(item, "fixturenames", ())) for item in its]
        shared = {name for n in names for name in n if name.endswith(ONCE)}
        if not shared:
            continue
        strays = [
            item.nodeid.split("::", 1)[1]
            for item, n in zip(its, names, strict=True)
            if not shared & n and (item.get_closest_marker("django_db") or {"db", "transactional_db"} & n)
        ]
        transactional = [
            item.nodeid.split("::", 1)[1]
            for item, n in zip(its, names, strict=True)
            if "transactional_db" in n or "live_server" in n or _transactional_marker(item)
        ]
        if strays or transactional:
            raise pytest.UsageError(
                f"{module} shares module-scoped data: every database test in it must use it, and none may be "
                f"transactional; move these to a module of their own: {', '.join(strays + transactional)}"
            )


def _transactional_marker(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("django_db")
    return bool(marker and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])))


# The name ending of every module-scoped fixture built on `module_transaction` (`demo_once`, a test module's
# `world_once`): the collection check above knows them by it.
ONCE = "_once"


# SQLite copies of the test database as it was migrated and with the demo loaded (the standard library's online
# backup API: a few milliseconds for the demo's database, where `load_demo` takes 4 s).
_SQLITE_SNAPSHOTS: dict[str, Any] = {}


def _sqlite_snapshot() -> Any:
    import sqlite3

    from django.db import connection

    connection.ensure_connection()
    copy = sqlite3.connect(":memory:", check_same_thread=False)
    connection.connection.backup(copy)
    return copy


def _sqlite_restore(name: str) -> None:
    from django.db import connection

    connection.ensure_connection()
    _SQLITE_SNAPSHOTS[name].backup(connection.connection)


@pytest.fixture
def demo_committed(transactional_db: Any) -> None:
    """The demo committed, for tests whose other threads or processes read it (a live server and its browser):
    exactly as `make run` has it, the migration's seeded rows included, and its tasks run (its vectors made).
    On SQLite the database is copied back from a snapshot taken after the first load; elsewhere it is loaded."""
    from django.core.management import call_command
    from django.db import connection

    forget_caches()
    if connection.vendor == "sqlite" and "demo" in _SQLITE_SNAPSHOTS:
        _sqlite_restore("demo")
        return
    if connection.vendor == "sqlite":
        _sqlite_restore("migrated")  # an earlier transactional test's flush removed the migration's rows
    else:
        _seed_floors_again()
    with tasks_in_process():
        call_command("load_demo", stdout=io.StringIO())
    forget_caches()
    if connection.vendor == "sqlite":
        _SQLITE_SNAPSHOTS["demo"] = _sqlite_snapshot()


def _seed_floors_again() -> None:
    """The tier floors migration 0012 seeds, where an earlier transactional test's flush removed them."""
    import importlib

    from django.apps import apps

    from catalog.models import TierFloor
    from catalog.selectors.floors import tier_floors_forget

    if not TierFloor.objects.exists():
        importlib.import_module("catalog.migrations.0012_tier_floors").seed_floors(apps, None)
        tier_floors_forget()


@pytest.fixture
def demo(demo_once: None, db: Any) -> None:
    """The demo catalogs, users and telemetry as `make run` loads them; what the test writes is rolled back."""
    forget_caches()


def rag(tool: str) -> str:
    return (
        f"USE WHEN: the clinician asks to {tool} for the patient currently open in the chart.\n"
        f"DO NOT USE WHEN: the request is about something other than {tool}.\n"
        "REQUIRES: a patient in context.\n"
        f"PRODUCES: a card with the result of {tool}, ready to read."
    )


def condor_tool(tool_id: str, **overrides: Any) -> dict[str, Any]:
    """A valid read descriptor; override any key (None deletes it)."""
    tool: dict[str, Any] = {
        "id": tool_id,
        "plane": "business",
        "module": "medication",
        "availability": "production",
        "policyClass": "read",
        "policyDomain": "medication",
        "mutating": False,
        "retryClass": "transient",
        "idempotency": "natural",
        "hitlTier": None,
        "ragDescription": rag(tool_id),
        "ragKeywords": {"en": [tool_id], "de": [tool_id + " (de)"]},
        "outputContainsIds": False,
        "alwaysInclude": False,
        "aliases": [],
    }
    for key, value in overrides.items():
        if value is None and key not in ("policyClass", "hitlTier", "policyDomain"):
            tool.pop(key, None)
        else:
            tool[key] = value
    return tool


def mutate_tool(tool_id: str, **overrides: Any) -> dict[str, Any]:
    base = {
        "policyClass": "mutate",
        "mutating": True,
        "retryClass": "none",
        "idempotency": "durable-required",
        "hitlTier": "high",
    }
    base.update(overrides)
    return condor_tool(tool_id, **base)


def condor_manifest(tools: list[dict[str, Any]] | None = None, **overrides: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "format": "condor-catalog/v1",
        "source": {"repository": "ddx-api", "commit": "c0ffee"},
        "baselineCount": 2,
        "teams": [
            {
                "id": "meds",
                "name": "Clinical Medication",
                "oncall": "@meds-oncall",
                "channel": "#meds",
                "escalation": "Page the medication lead",
            },
            {
                "id": "core",
                "name": "Condor Core",
                "oncall": "@core-oncall",
                "channel": "#core",
                "escalation": "Page the platform lead",
            },
        ],
        "ownership": [
            {"plane": "business", "module": "medication", "team": "meds"},
            {"plane": "business", "module": "*", "team": "core"},
            {"plane": "planner-control", "module": "*", "team": "core"},
        ],
        "profiles": [
            {"id": "clinical-production", "clinical": True, "availability": ["production"], "include": []},
            {"id": "demo", "clinical": False, "availability": ["production", "preview", "demo-only"]},
        ],
        "forcedFloors": [{"id": "intake", "trigger": "multi-entity-intake", "tools": ["listActiveMedications"]}],
        "tools": tools
        if tools is not None
        else [mutate_tool("prescribeMedication"), condor_tool("listActiveMedications")],
    }
    manifest.update(overrides)
    return manifest


def tucan_tool(tool_id: str, category: str = "ui", **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "ragDescription": rag(tool_id),
        "ragKeywords": [tool_id, tool_id + " öffnen"],
        "mutating": False,
        "alwaysInclude": False,
        "outputInstructions": None,
    }
    metadata.update(meta)
    return {
        "id": tool_id,
        "description": f"{tool_id} tool",
        "category": category,
        "inputSchema": {"type": "object", "properties": {}},
        "metadata": metadata,
    }


def tucan_manifest(tools: list[dict[str, Any]] | None = None, **overrides: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "format": "tucan-tools/v1",
        "agents": [{"id": "clinical", "categories": ["ui", "medications"]}],
        "tools": tools
        if tools is not None
        else [tucan_tool("show-modal"), tucan_tool("create-prescription", "medications", mutating=True)],
    }
    manifest.update(overrides)
    return manifest


def encode(manifest: dict[str, Any]) -> bytes:
    return json.dumps(manifest).encode("utf-8")


@pytest.fixture
def manifests() -> Any:
    class Builders:
        condor = staticmethod(condor_manifest)
        tucan = staticmethod(tucan_manifest)
        condor_tool = staticmethod(condor_tool)
        mutate_tool = staticmethod(mutate_tool)
        tucan_tool = staticmethod(tucan_tool)
        encode = staticmethod(encode)
        copy = staticmethod(copy.deepcopy)

    return Builders


@pytest.fixture
def make_token(db: Any) -> Callable[..., str]:
    def make(name: str = "runtime", scopes: tuple[str, ...] = ("catalog:read", "catalog:write"), **fields: Any) -> str:
        """A token as the console issues it: owned by the admin who issued it (pass owner=None for none)."""
        if "owner" not in fields:
            fields["owner"] = get_user_model().objects.get_or_create(username="token-issuer")[0]
        raw = ApiToken.generate()
        ApiToken.objects.create(
            name=name, prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=list(scopes), **fields
        )
        return raw

    return make


def on_postgres() -> bool:
    return connection.vendor == "postgresql"


# The checkout: tests read its demo data, start its manage.py and write screenshots beside it.
ROOT = Path(__file__).resolve().parent.parent

requires_postgres = pytest.mark.skipif(
    "postgresql" not in settings.DATABASES["default"]["ENGINE"],
    reason="needs a real PostgreSQL server: set DATABASE_URL (CI does)",
)


@pytest.fixture
def make_user(db: Any) -> Callable[..., Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    def make(username: str, *groups: str, **fields: Any) -> Any:
        user = get_user_model().objects.create_user(username=username, password="pw-" + username, **fields)
        # get_or_create: transactional tests flush the groups the role migration created.
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in groups])
        return user

    return make


class _MemoEmbedder:
    """The configured (real) embedder, remembering each text's vector for the session: tests import the demo
    catalog many times, and every import would otherwise embed the same 431 texts again."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.memo: dict[str, Any] = {}

    def embed(self, texts: Any) -> Any:
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            for text, vector in zip(todo, self.inner.embed(todo), strict=True):
                self.memo[text] = vector
        if not texts:
            return self.inner.embed(texts)
        return np.vstack([self.memo[t] for t in texts])


@pytest.fixture(autouse=True, scope="session")
def _session_embedder() -> Any:
    from catalog.rag import embedders

    built: dict[tuple[Any, ...], _MemoEmbedder] = {}
    real = embedders._cached

    def cached(*key: Any) -> _MemoEmbedder:
        if key not in built:
            built[key] = _MemoEmbedder(real(*key))
        return built[key]

    embedders._cached = cached  # type: ignore[assignment]
    yield
    embedders._cached = real  # type: ignore[assignment]


@contextmanager
def tasks_in_process() -> Iterator[None]:
    """Celery tasks run in this process after commit, even when REDIS_URL names a real broker (the real worker
    and beat have their own tests)."""
    from condor_admin.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = saved


def sign_off(system: str) -> None:
    """Two safety officers approve the system's newest undecided revision through the real sign-off service, so
    clinical profiles are served the newest import (what a signed-off catalog looks like)."""
    revision = CatalogRevision.objects.filter(system=system, review_state__in=UNDECIDED).order_by("-number").first()
    if revision is None:
        return
    group = Group.objects.get_or_create(name=roles.SAFETY_OFFICER)[0]
    for name in ("officer-one", "officer-two"):
        officer = get_user_model().objects.get_or_create(username=name)[0]
        officer.groups.add(group)
        result = revision_review(
            revision_id=revision.pk, reviewer=officer, decision="approved", comment="test sign-off"
        )
        if result.in_effect:
            return


def signed_import(raw: bytes, via: str = "test") -> Any:
    """Import a manifest and sign it off (see `sign_off`); returns the ImportResult."""
    result = catalog_import(raw=raw, via=via)
    sign_off(result.system)
    return result


@pytest.fixture
def cache_down(settings: Any) -> Iterator[None]:
    """The cache as it is while its Redis is away: Django's Redis cache, pointed at a port that refuses every
    connection (bound, never listening), as a stopped redis-server's port does. No mock: the real client fails."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        location = f"redis://127.0.0.1:{closed.getsockname()[1]}/0"
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": location}}
        yield


def _allow_flushing_the_audit_tables(sender: Any, connection: Any, **kwargs: Any) -> None:
    """Transactional tests end with Django's flush, one TRUNCATE of every table; on PostgreSQL the audit tables'
    trigger (migration 0014) lets a TRUNCATE through only in a session that set `condor.allow_audit_truncate`.
    Set here, for the test process's connections only: no production code sets it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET condor.allow_audit_truncate = 'on'")


connection_created.connect(_allow_flushing_the_audit_tables, dispatch_uid="condor-tests-allow-audit-flush")
