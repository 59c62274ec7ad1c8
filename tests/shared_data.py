"""Test data built once and shared: a module's data in a transaction rolled back at its end (`module_transaction`,
`demo_once`, `demo`), the demo committed for live servers and browsers (`demo_committed`), SQLite files for the
tests that run commands and servers as processes (`sqlite_files`), the per-process caches dropped between tests,
and which CI pass runs what (`ONE_PASS`). The fixtures are registered by tests/conftest.py."""

from __future__ import annotations

import io
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest


def forget_caches() -> None:
    """Drop every per-process cache of the catalog: the approvals gate's index, the resolve index, the telemetry's
    name index. They are keyed by the catalog's version; a test that edits rows without a new revision (and is
    rolled back) would otherwise leave the next test of its module a value derived from its edit."""
    from approvals.catalog_index import forget as forget_gate
    from catalog.cards.selectors.exports import bundles_forget
    from catalog.rag.selectors.index import forget as forget_rag
    from catalog.rag.selectors.vectors import embedding_status_forget
    from catalog.selectors import catalog, dashboard, owners
    from catalog.selectors.floors import tier_floors_forget
    from catalog.usage.catalog_index import forget as forget_usage

    forget_gate()
    forget_rag()
    forget_usage()
    tier_floors_forget()
    bundles_forget()
    embedding_status_forget()
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


# CI runs the suite in four processes side by side (.ci/run sets CONDOR_TEST_PASS): the suite on SQLite (`sqlite`)
# and on PostgreSQL + Redis (`postgresql`); the browser tests in real Chromium on SQLite (`browser`: the pages are
# the same on both databases); and the tests that start servers and workers and wait on them (`processes`, on
# PostgreSQL + Redis with a database of its own): gunicorn, Celery worker and beat, PostgreSQL and Redis stopped and
# started, each on a database of its own choosing (a SQLite file, a throw-away cluster) or on PostgreSQL. Those
# mostly wait, so they overlap the CPU-bound passes instead of lengthening one. What does not depend on the database
# runs in one pass only: the heavy tests that walk the demo through every page, role or message on SQLite.
# `make test` without CONDOR_TEST_PASS runs everything.
ONE_PASS = {
    "tests/integration/browser/": "browser",
    "tests/test_access_matrix.py": "sqlite",
    "tests/test_i18n_messages.py": "sqlite",
    "tests/catalog/management/test_load_demo.py": "sqlite",
    "tests/catalog/web/test_phone_pages.py": "sqlite",
    "tests/catalog/web/test_console_pages.py": "sqlite",
    "tests/test_architecture.py": "sqlite",  # reads the source, not a database
    # The fuzzer on PostgreSQL, whose text and integer types refuse what SQLite stores (a NUL, a 2**63).
    "tests/test_api_fuzz.py": "postgresql",
    "tests/integration/faults/": "processes",
    "tests/integration/boot/": "processes",
    "tests/integration/worker/": "processes",
    "tests/test_worker.py": "processes",
    "tests/test_processes.py": "processes",
    "tests/test_production.py": "processes",
    "tests/approvals/test_worker_beat.py": "processes",
    "tests/catalog/rag/test_worker_embeds.py": "processes",
    # Servers the tests start and wait on: live MCP servers (npm, PyPI, the SDK), an embedding server.
    "tests/integration/mcp/": "processes",
    "tests/catalog/rag/test_http_embedder.py": "processes",
    # Commands run as processes on a SQLite file (or memory) of their own, whatever the pass's database.
    "tests/catalog/management/test_import_command_output.py": "processes",
    "tests/catalog/management/test_commands.py::test_import_catalog_exits_non_zero_from_a_shell": "processes",
    "tests/test_startup_imports.py": "processes",
}
DATABASE_PASSES = ("sqlite", "postgresql")
PASSES = (*DATABASE_PASSES, "browser", "processes")


def one_pass(config: Any, items: list[pytest.Item]) -> None:
    """Deselect what another pass runs: in a database pass, what ONE_PASS sends elsewhere; in another pass,
    everything ONE_PASS does not send there."""
    this_pass = os.environ.get("CONDOR_TEST_PASS", "")
    if not this_pass:
        return
    if this_pass not in PASSES:
        raise pytest.UsageError(f"CONDOR_TEST_PASS={this_pass!r}: use one of {', '.join(PASSES)} (or leave it unset)")
    here = tuple(prefix for prefix, home in ONE_PASS.items() if home == this_pass)
    elsewhere = tuple(prefix for prefix, home in ONE_PASS.items() if home != this_pass)

    def runs_here(item: pytest.Item) -> bool:
        if this_pass in DATABASE_PASSES:
            return not item.nodeid.startswith(elsewhere)
        return item.nodeid.startswith(here)

    other = [item for item in items if not runs_here(item)]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [item for item in items if runs_here(item)]


def shared_data_check(items: list[pytest.Item]) -> None:
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


def keep_migrated_snapshot() -> None:
    """The SQLite test database as migrated (django_db_setup), for `demo_committed` to start from."""
    _SQLITE_SNAPSHOTS["migrated"] = _sqlite_snapshot()


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


class SqliteFiles:
    """Databases for the tests that run `manage.py` and servers as processes: a migrated SQLite file, and one with
    the demo loaded (`load_demo` with no broker, so its vectors are embedded in the command), each built once per
    session by those same commands in a process, then copied for each test that asks (SQLite's backup API). A test
    of the commands themselves runs them; the others start from what they leave."""

    def __init__(self, where: Path) -> None:
        self.where = where

    def _command_env(self, database: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
        env.update(DATABASE_URL=f"sqlite:///{database}", REDIS_URL="", CACHE_URL="", CONDOR_ACTIVE_PROFILE="")
        return env

    def _manage(self, database: Path, *args: str) -> None:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=Path(__file__).resolve().parents[1],
            env=self._command_env(database),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"manage.py {' '.join(args)}: {done.stderr[-3000:]}"

    def _template(self, name: str) -> Path:
        template = self.where / f"{name}.sqlite3"
        if not template.exists():
            building = self.where / f"{name}.building.sqlite3"
            if name == "demo":
                self._copy(self._template("migrated"), building)
                self._manage(building, "load_demo")
            else:
                self._manage(building, "migrate", "--no-input", "-v0")
            building.rename(template)
        return template

    @staticmethod
    def _copy(source: Path, destination: Path) -> Path:
        with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(destination)) as dst:
            src.backup(dst)
        return destination

    def migrated(self, destination: Path) -> Path:
        """A copy of the migrated database at `destination` (what `manage.py migrate` leaves)."""
        return self._copy(self._template("migrated"), destination)

    def demo(self, destination: Path) -> Path:
        """A copy of the migrated database with the demo loaded, at `destination`."""
        return self._copy(self._template("demo"), destination)


@pytest.fixture(scope="session")
def sqlite_files(tmp_path_factory: pytest.TempPathFactory) -> SqliteFiles:
    return SqliteFiles(tmp_path_factory.mktemp("sqlite-files"))
