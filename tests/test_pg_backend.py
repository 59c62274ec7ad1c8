"""Our PostgreSQL backend: a health check that asks the server only when the socket says something happened,
prepared statements, and timestamps read by psycopg's parser exactly as Django reads them."""

from __future__ import annotations

import time
from unittest import mock

import pytest
from django.db import connections

from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def _until(condition: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_a_live_connection_is_usable_and_a_terminated_one_is_not() -> None:
    connection = connections["default"]
    connection.ensure_connection()
    assert connection.vendor == "postgresql" and type(connection).__module__ == "condor_admin.postgresql.base"
    with mock.patch.object(connection.connection, "cursor", side_effect=AssertionError("asked the server")):
        assert connection.is_usable()  # alive, and nothing was sent to find out
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    # The server's goodbye (FATAL 57P01, then end of stream) makes the socket readable: the real check runs.
    assert _until(lambda: not connection.is_usable())
    connection.health_check_enabled, connection.health_check_done = True, False
    connection.close_if_health_check_failed()
    with connection.cursor() as cursor:  # a new connection, as a request after a database restart gets
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_a_statement_a_connection_repeats_is_prepared_once() -> None:
    """PostgreSQL stops parsing and planning a lookup the connection keeps running (PG_PREPARE_THRESHOLD, 5)."""
    from catalog.models import Team

    connection = connections["default"]
    assert connection.connection is None or connection.connection.prepare_threshold == 5
    for _ in range(6):
        list(Team.objects.filter(slug="no-such-team"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('FROM "catalog_team"' in statement and '"slug" = $1' in statement for statement in prepared), prepared


def test_timestamps_read_as_django_reads_them() -> None:
    """Our timestamptz loader (psycopg's parser) gives exactly what Django's own loader gives."""
    from django.db.backends.postgresql.psycopg_any import register_tzloader

    values = (
        "'2024-02-29 23:59:59.999999+05:30'",
        "'1901-01-01 00:00:00-08'",
        "'1970-01-01 00:00:00+00'",
        "'9999-12-31 23:59:59.5+00'",
        "'2026-03-29 02:30:00+02'",
        "now()",
        "NULL",
    )
    sql = "SELECT " + ", ".join(f"{v}::timestamptz" for v in values)
    connection = connections["default"]
    with connection.cursor() as cursor:
        assert cursor.cursor.adapters.get_loader(1184, 0).__module__ == "condor_admin.postgresql.base"
        cursor.execute(sql)
        ours = cursor.fetchone()
        register_tzloader(connection.timezone, cursor.cursor)  # Django's loader, on this cursor only
        cursor.execute(sql)
        djangos = cursor.fetchone()
    assert ours[:-2] == djangos[:-2] and ours[-1] is None is djangos[-1]
    assert [v.tzinfo for v in ours[:-1]] == [v.tzinfo for v in djangos[:-1]] == [connection.timezone] * 6
