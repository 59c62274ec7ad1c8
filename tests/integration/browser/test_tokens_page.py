"""A catalog admin issues a service token in real Chromium, sees it once, and revokes it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from catalog.models import ApiToken

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def catalog_admin(transactional_db: Any) -> None:
    user = get_user_model().objects.create_user("catalog-admin", password="condor-demo")
    user.groups.set([Group.objects.get_or_create(name="catalog-admin")[0]])
    # Tokens already there, so the list shows every state.
    now = timezone.now()
    for name, scopes, fields in (
        (
            "ci-export",
            ["catalog:read"],
            {"expires_at": now + timedelta(days=200), "last_used_at": now - timedelta(hours=3)},
        ),
        ("cards-cdn", ["cards"], {"expires_at": now - timedelta(days=2)}),
        ("old-runtime", ["approvals", "rag"], {"expires_at": now + timedelta(days=20), "revoked_at": now}),
    ):
        raw = ApiToken.generate()
        ApiToken.objects.create(name=name, prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=scopes, **fields)


def sign_in(page: Any, base: str, username: str) -> None:
    page.goto(base + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "condor-demo")
    page.click("button[type=submit]")
    page.wait_for_load_state()


def api_status(raw: str) -> int:
    return Client().get("/api/v1/catalog/findings", headers={"Authorization": f"Bearer {raw}"}).status_code


def test_admin_creates_sees_once_and_revokes_a_token(
    live_server: Any, catalog_admin: None, page: Any, screenshot: Any
) -> None:
    sign_in(page, live_server.url, "catalog-admin")
    page.click("nav details.more summary")  # the less daily pages sit under More
    page.click("nav >> text=API tokens")
    page.wait_for_url("**/tokens/")
    page.fill("#id_name", "runtime-prod")
    page.check('input[name=scopes][value="catalog:read"]')
    page.check("input[name=scopes][value=approvals]")
    page.click("text=Create token")
    shown = page.locator("#new-token")
    shown.wait_for()
    raw = shown.inner_text().strip()
    token = ApiToken.objects.get(name="runtime-prod")
    assert raw.startswith("cnd_") and ApiToken.hash(raw) == token.token_hash
    assert page.url.endswith("/tokens/")  # htmx swapped the panel: a reload is a plain GET
    screenshot("tokens-created")
    assert api_status(raw) == 200

    page.reload()
    page.wait_for_load_state()
    assert page.locator("#new-token").count() == 0
    assert raw not in page.content()
    row = page.locator("tr[data-token=runtime-prod]")
    assert f"{token.prefix}…" in row.inner_text()
    assert "active" in row.inner_text()

    row.locator("summary", has_text="Revoke…").click()
    screenshot("tokens-revoke-confirm")
    row.locator("button", has_text="Revoke “runtime-prod”").click()
    page.wait_for_load_state()
    assert "Token “runtime-prod” revoked" in page.locator(".messages").inner_text()
    assert page.locator("tr.token-revoked[data-token=runtime-prod]").count() == 1
    screenshot("tokens-revoked")
    assert api_status(raw) == 401


def test_the_form_explains_what_is_wrong(live_server: Any, catalog_admin: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "catalog-admin")
    page.goto(live_server.url + "/tokens/")
    page.fill("#id_name", "ci-export")
    page.click("text=Create token")
    page.locator(".token-form .errorlist").first.wait_for()
    errors = page.locator(".token-form").inner_text()
    assert "a token named “ci-export” already exists" in errors
    assert "choose at least one scope" in errors
    screenshot("tokens-invalid")
    assert ApiToken.objects.count() == 3


def test_the_page_reads_in_german(live_server: Any, catalog_admin: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "catalog-admin")
    page.goto(live_server.url + "/tokens/")
    page.select_option("#language-switch", "de")
    page.wait_for_url("**/tokens/")
    page.locator("h1", has_text="API-Tokens").wait_for()
    page.locator("tr[data-token=ci-export] summary").click()
    assert "Dienste, die „ci-export“ verwenden" in page.locator("tr[data-token=ci-export]").inner_text()
    screenshot("tokens-de")
