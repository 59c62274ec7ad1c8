from __future__ import annotations

import copy
import json
import socket
from collections.abc import Callable, Iterator
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
from tests.shared_data import (  # noqa: F401 - fixtures registered here, helpers the tests import from here
    demo,
    demo_committed,
    demo_once,
    forget_caches,
    keep_migrated_snapshot,
    module_transaction,
    one_pass,
    shared_data_check,
    sqlite_files,
    tasks_in_process,
)


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
            keep_migrated_snapshot()
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


def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    one_pass(config, items)
    shared_data_check(items)


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


def signed_in(make_user: Callable[..., Any], username: str, *groups: str) -> Any:
    """A test client signed in as a new user in these role groups (`make_user` is the fixture)."""
    from django.test import Client

    client = Client()
    client.force_login(make_user(username, *groups))
    return client


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
