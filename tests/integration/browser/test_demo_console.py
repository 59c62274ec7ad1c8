"""The console as people use it, in real Chromium: sign in, filter, open a tool, look up an owner, German."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo_loaded(demo_committed: None) -> None:
    pass


def sign_in(page: Any, base: str, username: str) -> None:
    page.goto(base + "/")
    assert "/login/" in page.url  # every page needs a signed-in user
    page.fill("#id_username", username)
    page.fill("#id_password", "condor-demo")
    page.click("button[type=submit]")
    page.wait_for_load_state()


def test_dashboard_after_sign_in(live_server: Any, demo_loaded: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "admin")
    assert page.locator("h1").inner_text() == "Dashboard"
    rows = page.locator("section[aria-labelledby=systems-h] tbody tr")
    assert rows.count() == 2 and "81" in rows.nth(0).inner_text() and "350" in rows.nth(1).inner_text()
    assert page.locator("td .drift").count() >= 2  # baselines that differ from the live count
    assert page.locator("svg.chart").count() >= 6
    screenshot("dashboard-en")


def test_filter_the_catalog_in_place_and_share_the_url(
    live_server: Any, demo_loaded: None, page: Any, screenshot: Any
) -> None:
    sign_in(page, live_server.url, "oncall")
    page.click("nav >> text=Catalog")
    page.select_option("#id_system", "condor")
    page.wait_for_url("**system=condor**")
    page.select_option("#id_mutating", "yes")
    page.wait_for_url("**mutating=yes**")
    page.select_option("#id_hitl", "none")
    page.wait_for_url("**hitl=none**")
    page.locator("#catalog-table tbody tr").first.wait_for()
    assert page.locator("#catalog-table tbody tr").count() == 1
    assert "attachDocumentToChart" in page.locator("#catalog-table").inner_text()
    screenshot("catalog-filtered-en")
    shared = page.url
    page.goto(shared)  # the same link opens the same view
    assert page.locator("#catalog-table tbody tr").count() == 1
    page.click("text=attachDocumentToChart")
    page.wait_for_load_state()
    assert "ungated mutation" in page.content()
    screenshot("tool-en")


def test_search_as_you_type(live_server: Any, demo_loaded: None, page: Any) -> None:
    sign_in(page, live_server.url, "oncall")
    page.goto(live_server.url + "/catalog/")
    page.fill("#id_q", "Rezept")
    page.wait_for_url("**q=Rezept**")
    assert "prescribeMedication" in page.locator("#catalog-table").inner_text()


def test_owner_lookup_with_a_misspelled_id_from_the_header(
    live_server: Any, demo_loaded: None, page: Any, screenshot: Any
) -> None:
    sign_in(page, live_server.url, "oncall")
    page.keyboard.press("/")  # the shortcut focuses the header's lookup box
    page.keyboard.type("get_clinical_notes")
    page.keyboard.press("Enter")
    page.wait_for_url("**/owners/?q=get_clinical_notes**")
    assert "Did you mean" in page.content()
    assert "tucan:list-clinical-notes" in page.locator("#lookup-result").inner_text()
    screenshot("owner-lookup-near-miss-en")
    page.fill("#id_q", "visit-recording-card")
    page.locator(".owner-card").wait_for()
    assert "@cards-oncall" in page.locator(".owner-card").inner_text()
    screenshot("owner-lookup-en")


def test_switch_to_german(live_server: Any, demo_loaded: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "safety")
    page.select_option("#language-switch", "de")
    page.wait_for_load_state()
    page.locator("h1", has_text="Übersicht").wait_for()
    assert page.locator("nav >> text=Katalog").count() == 1
    screenshot("dashboard-de")
    for path, name in (
        ("/catalog/?system=condor", "catalog-de"),
        ("/tools/condor/recordPayment/", "tool-de"),
        ("/owners/?q=get_clinical_notes", "owner-lookup-de"),
        ("/teams/", "teams-de"),
        ("/findings/", "findings-de"),
        ("/revisions/condor/1/", "revision-de"),
    ):
        page.goto(live_server.url + path)
        assert page.locator("html").get_attribute("lang") == "de"
        screenshot(name)
    # Clinical and LLM-facing text stays as declared.
    page.goto(live_server.url + "/tools/condor/recordPayment/")
    assert "USE WHEN:" in page.content()


def test_every_page_in_english(live_server: Any, demo_loaded: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "safety")
    for path, name in (("/teams/", "teams-en"), ("/teams/billing/", "team-en"), ("/revisions/", "revisions-en")):
        response = page.goto(live_server.url + path)
        assert response is not None and response.status == 200, path
        assert page.locator("h1").count() == 1
        screenshot(name)
