"""API tokens in the console: a catalog admin issues (shown once), scopes, expires and revokes service tokens;
the API obeys at once; every write is audited; everyone else gets a 403."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.core import tokens as token_services
from catalog.core.audit import audit_verify
from catalog.core.tokens import TokenRefused, api_token_create, api_token_revoke
from catalog.models import ApiToken, AuditEvent

pytestmark = pytest.mark.django_db
FINDINGS = "/api/v1/catalog/findings"


@pytest.fixture
def admin(make_user: Any) -> Any:
    return make_user("cat", "catalog-admin")


@pytest.fixture
def console(admin: Any) -> Client:
    client = Client()
    client.force_login(admin)
    return client


def days_ahead(n: int) -> str:
    return (timezone.localdate() + timedelta(days=n)).isoformat()


def create(console: Client, **fields: Any) -> Any:
    data = {"name": "runtime-prod", "scopes": ["catalog:read"], "expires_on": days_ahead(30)}
    data.update(fields)
    return console.post("/tokens/new", data)


def shown_token(response: Any) -> str:
    match = re.search(r'id="new-token">([^<]+)<', response.content.decode())
    assert match, "the new token is not on the page"
    return match.group(1)


def api(raw: str, url: str = FINDINGS) -> int:
    return Client().get(url, headers={"Authorization": f"Bearer {raw}"}).status_code


def test_admin_creates_a_token_and_sees_it_exactly_once(console: Client) -> None:
    response = create(console, name="runtime-prod", scopes=["catalog:read", "rag"])
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]  # no cache or back button keeps the secret
    raw = shown_token(response)
    token = ApiToken.objects.get(name="runtime-prod")
    # Only the hash and a prefix are stored; the raw token is in no column and no audit event.
    assert token.token_hash == ApiToken.hash(raw) and raw.startswith(token.prefix) and token.prefix != raw
    assert token.scopes == ["catalog:read", "rag"]
    assert timezone.localdate(token.expires_at) == timezone.localdate() + timedelta(days=30)
    assert not any(raw in str(v) for e in AuditEvent.objects.all() for v in (e.before, e.after))
    # Reloading the list shows the prefix, never the token again.
    listing = console.get("/tokens/").content.decode()
    assert raw not in listing and f"{token.prefix}…" in listing and 'id="new-token"' not in listing
    assert api(raw) == 200


def test_create_writes_an_audit_event_naming_the_admin(console: Client) -> None:
    create(console, name="ci-export", scopes=["catalog:read"])
    event = AuditEvent.objects.get(action="catalog.api_token.created")
    token = ApiToken.objects.get(name="ci-export")
    assert (event.actor, event.object_type, event.object_id) == ("user:cat", "catalog.api_token", "ci-export")
    assert event.after["prefix"] == token.prefix and event.after["scopes"] == ["catalog:read"]
    assert token.token_hash not in str(event.after)
    assert audit_verify().ok


def test_htmx_create_swaps_only_the_panel(console: Client) -> None:
    response = console.post(
        "/tokens/new",
        {"name": "runtime", "scopes": ["cards"], "expires_on": days_ahead(7)},
        headers={"HX-Request": "true"},
    )
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body and 'id="token-panel"' in body
    assert ApiToken.hash(shown_token(response)) == ApiToken.objects.get(name="runtime").token_hash


def test_revoking_takes_effect_at_once(console: Client, make_token: Any) -> None:
    raw = make_token("runtime", scopes=("catalog:read",))
    assert api(raw) == 200
    token = ApiToken.objects.get(name="runtime")
    response = console.post(f"/tokens/{token.pk}/revoke")
    assert response.status_code == 302 and response["Location"] == "/tokens/"
    assert api(raw) == 401  # the very next call
    event = AuditEvent.objects.get(action="catalog.api_token.revoked")
    assert event.actor == "user:cat" and event.object_id == "runtime" and event.before["prefix"] == token.prefix
    page = console.get("/tokens/").content.decode()
    assert "revoked: its next API call gets a 401" in page
    row = re.search(r'<tr class="token-revoked" data-token="runtime">.*?</tr>', page, re.S)
    assert row and "Revoke…" not in row.group(0)  # nothing left to revoke


def test_revoking_twice_says_so_and_audits_once(console: Client, make_token: Any) -> None:
    make_token("runtime")
    token = ApiToken.objects.get(name="runtime")
    console.post(f"/tokens/{token.pk}/revoke")
    response = console.post(f"/tokens/{token.pk}/revoke", follow=True)
    assert "token “runtime” was already revoked" in response.content.decode()
    assert AuditEvent.objects.filter(action="catalog.api_token.revoked").count() == 1


def test_revoking_an_unknown_token_is_a_404(console: Client) -> None:
    assert console.post("/tokens/999/revoke").status_code == 404


def test_the_list_asks_before_revoking(console: Client, make_token: Any) -> None:
    make_token("runtime")
    page = console.get("/tokens/").content.decode()
    # Revoke is behind a disclosure that says what will happen; the button names the token.
    assert "<summary>Revoke…</summary>" in page
    assert "Services using “runtime” get a 401 from their next call on" in page
    assert "Revoke “runtime”" in page


def test_an_expired_token_is_refused_at_once(make_token: Any) -> None:
    expired = make_token("old", expires_at=timezone.now() - timedelta(seconds=1))
    assert api(expired) == 401
    live = make_token("live", expires_at=timezone.now() + timedelta(hours=1))
    assert api(live) == 200
    ApiToken.objects.filter(name="live").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert api(live) == 401  # nothing cached: the row is read on every call


def test_the_list_shows_each_tokens_state(console: Client, make_token: Any) -> None:
    now = timezone.now()
    make_token("a-revoked", revoked_at=now, expires_at=now + timedelta(days=3))
    make_token("b-expired", expires_at=now - timedelta(days=1), last_used_at=now - timedelta(days=2, minutes=1))
    make_token("c-active", scopes=("approvals", "cards"), expires_at=now + timedelta(days=3), last_used_at=now)
    make_token("d-no-expiry")  # the management command may still issue one that never expires
    page = console.get("/tokens/").content.decode()
    rows = re.findall(r'<tr class="token-(\w+)" data-token="([\w-]+)">', page)
    # Live ones first, then expired, then revoked.
    assert rows == [
        ("active", "c-active"),
        ("active", "d-no-expiry"),
        ("expired", "b-expired"),
        ("revoked", "a-revoked"),
    ]
    active_row = re.search(r'data-token="c-active">.*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert "approvals" in active_row and "cards" in active_row and "within the last minute" in active_row
    assert "2\xa0days ago" in re.search(r'data-token="b-expired">.*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert ">never<" in re.search(r'data-token="d-no-expiry">.*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]


def test_every_api_call_records_last_use_throttled_to_once_a_minute(make_token: Any) -> None:
    raw = make_token("runtime")
    assert ApiToken.objects.get(name="runtime").last_used_at is None
    assert api(raw) == 200
    first = ApiToken.objects.get(name="runtime").last_used_at
    assert first is not None and timezone.now() - first < timedelta(seconds=5)
    with CaptureQueriesContext(connection) as ctx:
        assert api(raw) == 200
    assert not any(q["sql"].startswith("UPDATE") and "apitoken" in q["sql"] for q in ctx.captured_queries)
    assert ApiToken.objects.get(name="runtime").last_used_at == first  # within the minute: no write
    ApiToken.objects.filter(name="runtime").update(last_used_at=first - timedelta(seconds=61))
    assert api(raw) == 200
    assert ApiToken.objects.get(name="runtime").last_used_at > first  # type: ignore[operator]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"name": "  "}, "name", "name the service that will use this token, e.g. runtime-prod"),
        ({"name": "Runtime"}, "name", "a token named “Runtime” already exists"),
        ({"scopes": []}, "scopes", "choose at least one scope: the API areas this service may call"),
        ({"scopes": ["catalog:read", "admin"]}, "scopes", "Select a valid choice. admin is not one of the available"),
        ({"expires_on": ""}, "expires_on", "every token expires: choose the last day it may be used"),
        ({"expires_on": days_ahead(-1)}, "expires_on", "the expiry date must be in the future"),
        ({"expires_on": days_ahead(366)}, "expires_on", "at most 365 days ahead"),
    ],
)
def test_invalid_tokens_are_refused_with_a_clear_message(
    console: Client, make_token: Any, fields: dict[str, Any], field: str, message: str
) -> None:
    make_token("runtime")
    before = (ApiToken.objects.count(), AuditEvent.objects.count())
    response = create(console, **fields)
    body = response.content.decode()
    assert response.status_code == 200 and message in body
    assert 'id="new-token"' not in body
    # The message sits with its field (the form re-renders with what was typed).
    form = body[body.index('class="card token-form"') :]
    assert form.index(message) > form.index(f'name="{field}"')
    assert (ApiToken.objects.count(), AuditEvent.objects.count()) == before


def test_every_problem_is_reported_at_once(console: Client, make_token: Any) -> None:
    make_token("runtime")
    body = create(console, name="runtime", scopes=[], expires_on="").content.decode()
    for message in (
        "a token named “runtime” already exists",
        "choose at least one scope",
        "every token expires: choose the last day it may be used",
    ):
        assert message in body
    assert ApiToken.objects.count() == 1


def test_the_maximum_lifetime_is_a_setting(console: Client, settings: Any) -> None:
    settings.CONDOR_TOKEN_MAX_DAYS = 30
    assert "at most 30 days ahead" in create(console, name="a", expires_on=days_ahead(31)).content.decode()
    assert "at most 30 days ahead" in console.get("/tokens/").content.decode()  # the form says so up front
    create(console, name="b", expires_on=days_ahead(30))
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["b"]


def test_the_service_refuses_unknown_scopes_and_keeps_one_order(admin: Any) -> None:
    expires = timezone.now() + timedelta(days=1)
    with pytest.raises(
        TokenRefused, match="unknown scope admin; choose from catalog:read, catalog:write, approvals, rag, cards"
    ):
        api_token_create(name="x", scopes=["catalog:read", "admin"], expires_at=expires, created_by=admin)
    issued = api_token_create(
        name="x", scopes=["cards", "catalog:write", "cards", "catalog:read"], expires_at=expires, created_by=admin
    )
    assert issued.token.scopes == ["catalog:read", "catalog:write", "cards"]


def test_the_services_refuse_people_without_the_role(make_user: Any, make_token: Any) -> None:
    officer = make_user("olga", "safety-officer")
    with pytest.raises(TokenRefused) as refused:
        api_token_create(
            name="x", scopes=["catalog:read"], expires_at=timezone.now() + timedelta(days=1), created_by=officer
        )
    assert refused.value.forbidden
    make_token("runtime")
    with pytest.raises(TokenRefused):
        api_token_revoke(token_id=ApiToken.objects.get().pk, revoked_by=officer)
    assert ApiToken.objects.get().revoked_at is None


def test_no_token_without_its_audit_event(admin: Any, monkeypatch: Any) -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("audit log unavailable")

    monkeypatch.setattr(token_services, "audit_record", broken)
    with pytest.raises(RuntimeError):
        api_token_create(
            name="x", scopes=["catalog:read"], expires_at=timezone.now() + timedelta(days=1), created_by=admin
        )
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("role", ["safety-officer", "on-call", "approver", "translator"])
def test_other_roles_get_a_403_and_no_link(make_user: Any, make_token: Any, role: str) -> None:
    make_token("runtime")
    client = Client()
    client.force_login(make_user("someone", role, is_staff=True))
    token = ApiToken.objects.get()
    assert client.get("/tokens/").status_code == 403
    assert create(client).status_code == 403
    assert client.post(f"/tokens/{token.pk}/revoke").status_code == 403
    assert ApiToken.objects.get().revoked_at is None and ApiToken.objects.count() == 1
    assert 'href="/tokens/"' not in client.get("/").content.decode()


def test_revoking_in_the_django_admin_is_audited_too(make_user: Any, make_token: Any) -> None:
    raw = make_token("runtime")
    client = Client()
    client.force_login(make_user("root", "catalog-admin", is_superuser=True, is_staff=True))
    token = ApiToken.objects.get()
    response = client.post("/admin/catalog/apitoken/", {"action": "revoke", "_selected_action": [str(token.pk)]})
    assert response.status_code == 302
    assert api(raw) == 401
    assert AuditEvent.objects.get(action="catalog.api_token.revoked").actor == "user:root"


def test_superusers_manage_tokens_without_the_role(make_user: Any) -> None:
    client = Client()
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    assert 'href="/tokens/"' in client.get("/").content.decode()
    assert client.get("/tokens/").status_code == 200
    shown_token(create(client, name="break-glass"))


def test_catalog_admins_see_the_link(console: Client) -> None:
    assert 'href="/tokens/" aria-current="page">API tokens</a>' in console.get("/tokens/").content.decode()


def test_the_page_is_german_for_german_readers(console: Client) -> None:
    console.post("/language", {"language": "de", "next": "/tokens/"})
    page = console.get("/tokens/").content.decode()
    assert "<h1>API-Tokens</h1>" in page and "Token erstellen" in page
    body = create(console, name="x", scopes=[]).content.decode()
    assert "mindestens einen Geltungsbereich" in body


def list_queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get("/tokens/").status_code == 200
    return len(ctx.captured_queries)


def test_the_list_runs_a_fixed_number_of_queries(console: Client, make_token: Any) -> None:
    console.get("/")  # the session's first request loads the language preference once
    for i in range(3):
        make_token(f"svc-{i:03}", last_used_at=timezone.now())
    few = list_queries(console)
    for i in range(3, 120):
        make_token(f"svc-{i:03}", revoked_at=timezone.now() if i % 3 else None)
    many = list_queries(console)
    # user, groups, token count, one page of tokens (the session comes from the cache)
    assert few == many == 4
