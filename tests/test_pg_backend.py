"""Django's own PostgreSQL connection handling, as configured (persistent connections, health-checked before
reuse): a connection whose backend the server ended is replaced before the next request uses it."""

from __future__ import annotations

import pytest
from django.db import close_old_connections, connections

from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def _backend_pid() -> int:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        row = cursor.fetchone()
    assert row is not None
    return int(row[0])


def test_connections_are_django_s_own_backend_kept_between_requests_and_checked() -> None:
    connection = connections["default"]
    assert type(connection).__module__ == "django.db.backends.postgresql.base"
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
    assert connection.settings_dict["CONN_MAX_AGE"] > 0  # the documented default: kept between requests
    first = _backend_pid()
    close_old_connections()  # what Django does at the start and the end of each request
    assert _backend_pid() == first


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
