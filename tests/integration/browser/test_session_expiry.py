"""A person idle past the limit types into the catalog filter: the whole page goes to sign-in (htmx follows the
401's HX-Redirect), says why, and signing in again lands on the catalog."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from condor_admin import middleware

from .conftest import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_idle_session_sends_the_page_to_sign_in_when_htmx_asks(
    page: Any, live_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    get_user_model().objects.create_user("nurse", password="condor-demo")
    sign_in(page, live_server.url, "nurse", then="/catalog/")
    assert page.url.endswith("/catalog/")
    start = time.time()
    monkeypatch.setattr(middleware, "now", lambda: start + 31 * 60)  # the live server runs in this process
    page.fill("#id_q", "warfarin")  # htmx asks for the table after 400 ms
    page.wait_for_url("**/login/?next=%2Fcatalog%2F*", timeout=10_000)
    assert "You were signed out after 30 minutes without activity." in page.content()
    assert page.locator("#catalog-table").count() == 0  # no sign-in form swapped into a table: a whole page
