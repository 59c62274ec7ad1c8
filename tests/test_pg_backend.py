"""Django's own PostgreSQL connection handling, as configured (persistent connections, health-checked before
reuse): a connection whose backend the server ended is replaced before the next request uses it.

The mode is measured, not assumed: bench/connections.py ran a new connection per request, these persistent
connections and Django's psycopg pool side by side under the Procfile's gunicorn (bench/README.md,
"Connections"); these tests hold what that choice relies on.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time

import pytest
from django.db import close_old_connections, connections

from tests.conftest import ROOT, requires_postgres


def _backend_pid() -> int:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        row = cursor.fetchone()
    assert row is not None
    return int(row[0])


def _backends() -> int:
    """Client backends connected to this test database (this thread's own included)."""
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND backend_type = 'client backend'"
        )
        row = cursor.fetchone()
    assert row is not None
    return int(row[0])


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_connections_are_django_s_own_backend_kept_between_requests_and_checked() -> None:
    connection = connections["default"]
    assert type(connection).__module__ == "django.db.backends.postgresql.base"
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
    assert connection.settings_dict["CONN_MAX_AGE"] > 0  # the documented default: kept between requests
    assert not connection.settings_dict["OPTIONS"].get("pool")  # not Django's pool: measured, and not chosen
    first = _backend_pid()
    close_old_connections()  # what Django does at the start and the end of each request
    assert _backend_pid() == first


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_is_replaced_at_the_next_request() -> None:
    pid = _backend_pid()
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    close_old_connections()  # request_started: the health check finds the dead connection and closes it
    connections["default"].health_check_done = False
    close_old_connections()
    assert _backend_pid() != pid


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_threads_that_end_leave_no_backend_open() -> None:
    """Each gunicorn thread keeps its own connection, so a web host holds at most WEB_CONCURRENCY ×
    GUNICORN_THREADS backends: bounded by the threads alive, not by every thread that ever ran a query."""
    before = _backends()
    opened: list[int] = []
    threads = [threading.Thread(target=lambda: opened.append(_backend_pid())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(opened)) == 8  # each thread had a connection of its own, and closed none of them
    gc.collect()
    deadline = time.monotonic() + 5  # the server notices the closed sockets a moment later
    while _backends() != before:
        assert time.monotonic() < deadline, f"{_backends() - before} backends left open by threads that ended"
        time.sleep(0.05)


def test_a_deployment_that_sets_nothing_gets_the_measured_connection_settings() -> None:
    """The default is the measured mode: without CONN_MAX_AGE in the environment, a PostgreSQL connection is kept
    60 s and checked before reuse (the README's production section and the Procfile's comment say the same)."""
    env = {k: v for k, v in os.environ.items() if k != "CONN_MAX_AGE" and not k.startswith(("DJANGO_", "PYTEST"))}
    env["DATABASE_URL"] = "postgres://condor@127.0.0.1:5432/condor"  # parsed only: nothing connects
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'condor_admin.settings'; django.setup(); "
        "from django.conf import settings; d = settings.DATABASES['default']; "
        "print(d['ENGINE'], d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'], bool(d.get('OPTIONS', {}).get('pool')))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["django.db.backends.postgresql", "60", "True", "False"]
