"""While the database is away the console's pages answer a styled 503 with Retry-After, as the API does: never the
500 a bug gets. Here the default database is pointed at a file that cannot be opened (SQLite) or a port nothing
listens on (PostgreSQL), so the session, the user and the view all meet a real OperationalError.
tests/integration/faults/test_console_outage.py stops a real PostgreSQL under gunicorn."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.db.utils import load_backend
from django.test import Client

from condor_admin.errors import RETRY_AFTER_SECONDS

pytestmark = pytest.mark.django_db


def browser() -> Client:
    """A client that gets the answer a browser gets (the test client re-raises a view's exception by default)."""
    return Client(raise_request_exception=False)


@pytest.fixture
def signed_in(make_user: Any) -> Client:
    client = browser()
    client.force_login(make_user("otto", "on-call", is_superuser=True))
    return client


@pytest.fixture
def database_away(tmp_path: Path) -> Iterator[None]:
    """The default connection, for the test's requests, opens a database that is not there."""
    original = connections["default"]
    if original.vendor == "sqlite":
        settings = {**original.settings_dict, "NAME": str(tmp_path / "gone" / "condor.sqlite3")}
    else:
        with socket.socket() as s:  # a port that was free a moment ago: nothing answers there
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        settings = {**original.settings_dict, "HOST": "127.0.0.1", "PORT": port}
    away = load_backend(settings["ENGINE"]).DatabaseWrapper(settings, "default")
    connections["default"] = away
    try:
        yield
    finally:
        connections["default"] = original
        away.close()


def assert_unavailable(response: Any) -> str:
    body = response.content.decode()
    assert response.status_code == 503, body[:500]
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    return body


@pytest.mark.parametrize("path", ["/", "/approvals/", "/catalog/", "/tools/condor/prescribeMedication/"])
def test_a_signed_in_page_answers_503_with_retry_after(signed_in: Client, database_away: None, path: str) -> None:
    body = assert_unavailable(signed_in.get(path))
    assert "The console is back in a moment" in body and "Something went wrong" not in body
    assert "condor/console.css" in body and 'lang="en"' in body  # the console's styling, without base.html


def test_signing_in_answers_503_and_the_sign_in_page_does_not_fail(database_away: None) -> None:
    client = browser()
    assert client.get("/login/").status_code in (200, 503)  # the empty form needs no database
    assert_unavailable(client.post("/login/", {"username": "otto", "password": "pw-otto"}))


def test_a_form_post_answers_503(signed_in: Client, database_away: None) -> None:
    assert_unavailable(signed_in.post("/language", {"language": "de", "next": "/"}))


def test_htmx_gets_one_line_and_a_german_reader_reads_german(signed_in: Client, database_away: None) -> None:
    htmx = signed_in.get("/approvals/", headers={"HX-Request": "true"})
    assert assert_unavailable(htmx).startswith("The console's database is not reachable right now")
    assert htmx["Content-Type"].startswith("text/plain")
    german = assert_unavailable(signed_in.get("/", headers={"Accept-Language": "de"}))
    assert 'lang="de"' in german and "Die Konsole ist gleich wieder da" in german
