"""Sign in as the demo users would and see the imported catalog, in a real browser."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo_loaded(transactional_db: Any) -> None:
    call_command("load_demo", stdout=io.StringIO())


def sign_in(page: Any, base: str, username: str) -> None:
    page.goto(base + "/")
    assert "/login/" in page.url  # every page needs a signed-in user
    page.fill("#id_username", username)
    page.fill("#id_password", "condor-demo")
    page.click("button[type=submit]")
    page.wait_for_load_state()


def test_admin_signs_in_and_sees_both_catalogs(live_server: Any, demo_loaded: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "admin")
    rows = page.locator("tbody tr")
    assert rows.count() == 2
    condor = rows.nth(0).inner_text()
    assert condor.startswith("condor") and "81" in condor
    assert "350" in rows.nth(1).inner_text()
    # The audited baseline that differs from the live business count is highlighted.
    assert page.locator("td .drift").count() == 2
    screenshot("home")

    page.click("text=Raw data (admin)")
    page.goto(live_server.url + "/admin/catalog/tool/?system__exact=tucan&q=prescription")
    assert page.locator("#result_list tbody tr").count() >= 1
    screenshot("admin-tools")


def test_wrong_password_is_refused(live_server: Any, demo_loaded: None, page: Any) -> None:
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "safety")
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    assert "/login/" in page.url
    assert page.locator(".errorlist").count() == 1


def test_german_console(live_server: Any, demo_loaded: None, page: Any, screenshot: Any) -> None:
    page.set_extra_http_headers({"Accept-Language": "de"})
    sign_in(page, live_server.url, "oncall")
    assert page.locator("h1").inner_text() == "Tool-Katalog"
    assert page.locator("text=Abmelden").count() == 1
    screenshot("home-de")
