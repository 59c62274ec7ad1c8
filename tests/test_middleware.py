"""Token-authenticated API calls skip the console's middleware; the console keeps all of it."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from condor_admin.middleware import ConsoleCSPMiddleware, console_only

API = "/api/v1/catalog/revisions"


@pytest.fixture
def signed_in(make_user: Any) -> Client:
    client = Client()
    client.force_login(make_user("alice", "safety-officer"))
    return client


def test_an_api_call_touches_no_session_language_or_cookie(signed_in: Client, make_token: Any) -> None:
    """A runtime that happens to send a console session cookie (a shared cookie jar) and a German
    Accept-Language still gets a plain JSON answer: nothing of the console's session is read or written."""
    token = make_token(scopes=("catalog:read",))
    bearer = {"Authorization": f"Bearer {token}", "Accept-Language": "de"}
    Client().get(API, headers=bearer)  # the token's first use writes last_used_at; compare the calls after it
    with CaptureQueriesContext(connection) as with_cookie:
        answer = signed_in.get(API, headers=bearer)
    with CaptureQueriesContext(connection) as without_cookie:
        plain = Client().get(API, headers=bearer)
    assert answer.status_code == plain.status_code == 200
    assert answer.json() == plain.json()
    assert not answer.cookies  # no session or CSRF cookie set or refreshed
    assert "Content-Language" not in answer.headers and "Vary" not in answer.headers
    assert answer.headers["Content-Security-Policy"] == ConsoleCSPMiddleware.API_POLICY
    assert not any("django_session" in q["sql"] for q in with_cookie.captured_queries)
    assert len(with_cookie.captured_queries) == len(without_cookie.captured_queries)


def test_the_console_keeps_its_middleware(signed_in: Client) -> None:
    page = signed_in.get("/", headers={"Accept-Language": "de"})
    assert page.status_code == 200
    assert page.headers["Content-Language"] == "de"  # locale
    assert "Cookie" in page.headers["Vary"]  # the session was read
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]  # the console's policy, not the API's


def test_api_paths_without_a_token_keep_the_whole_stack(signed_in: Client) -> None:
    """Only a bearer token makes a call a service's: a browser under /api/ is a console visitor."""
    answer = signed_in.get(API, headers={"Accept-Language": "de"})
    assert answer.status_code == 401
    assert answer.headers["Content-Security-Policy"] != ConsoleCSPMiddleware.API_POLICY
    assert answer.headers["Content-Language"] == "de"


def test_console_forms_still_need_the_csrf_token(make_user: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("root", "catalog-admin"))
    refused = client.post("/tokens/new", {"name": "x", "scopes": ["catalog:read"]})
    assert refused.status_code == 403


def test_middleware_with_view_hooks_cannot_be_made_console_only() -> None:
    with pytest.raises(ImproperlyConfigured, match="process_view"):
        console_only("django.middleware.csrf.CsrfViewMiddleware")
