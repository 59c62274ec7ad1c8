"""The demo safety officers keep the tier floors in real Chromium: one adds a floor, sees which tools it catches,
proposes removing it, and the second confirms; at 1440 and 390 px wide."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from catalog.models import Finding, TierFloor
from tests.integration.browser.conftest import SCREENSHOTS, fits_the_width, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

SEED = importlib.import_module("catalog.migrations.0012_tier_floors")


@pytest.fixture
def demo_with_seeded_floors(demo_committed: None) -> None:
    # The migration's floors are part of the demo as `make run` has it (tests/conftest.py, `demo_committed`).
    assert TierFloor.objects.count() == len(SEED.SEED_FLOORS)


def test_officer_adds_a_floor_and_sees_it_catch_the_lab_orders(
    live_server: Any, demo_with_seeded_floors: None, page: Any, screenshot: Any
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, live_server.url, "safety")
    page.click("nav details.more summary")  # the less daily pages sit under More
    page.click("nav >> text=Tier floors")
    page.wait_for_url("**/floors/")
    assert page.locator("li.floor").count() == len(SEED.SEED_FLOORS)
    screenshot("floors-1440")

    # A pattern that names nothing is refused beside its field, the input kept.
    page.fill("#id_pattern", "*")
    page.fill("#id_reason", "every write")
    page.click("text=Add floor")
    page.wait_for_load_state()
    assert "at least 3 letters or digits" in page.locator(".floor-form").inner_text()
    assert page.input_value("#id_pattern") == "*"

    page.fill("#id_pattern", "")
    page.fill("#id_policy_domain", "lab")
    page.check("#id_min_tier_0")  # high
    page.fill("#id_reason", "Lab orders and acknowledgements reach the patient: a clinician approves each.")
    page.click("text=Add floor")
    page.wait_for_url("**/floors/?floor=*")
    assert "Tier floor domain:lab added." in page.locator(".messages").inner_text()
    caught = page.locator("#caught")
    assert "What domain:lab catches" in caught.inner_text()
    assert caught.locator("[data-tool='condor:orderLabTest'] >> text=below the floor").count() == 1
    assert caught.locator("[data-tool='condor:acknowledgeLabResult']").count() == 1
    card = page.locator("li.floor[data-floor='domain:lab']")
    assert "catches 2 mutating tools" in card.inner_text() and "2 declared below it" in card.inner_text()
    assert "the gate applies at least high" in caught.inner_text()
    screenshot("floors-added-1440")
    assert Finding.objects.filter(rule="hitl-tier-below-floor", tool__declared_id="orderLabTest").exists()

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.wait_for_load_state()
    assert fits_the_width(page)
    card.locator("summary", has_text="Remove…").click()
    assert fits_the_width(page)
    screenshot("floors-390")
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "floors-390-card.png"))  # the viewport: what a phone shows

    # Removing is a proposal: the floor holds until a second officer confirms it.
    card.locator("details.remove textarea").fill("The lab team gates orders in its own system.")
    card.locator("button", has_text="Propose removing domain:lab").click()
    page.wait_for_load_state()
    assert "Removal of domain:lab proposed" in page.locator(".messages").inner_text()
    proposal = card.locator(".proposal")
    assert "removal proposed" in proposal.inner_text() and "You proposed it" in proposal.inner_text()
    assert proposal.locator("button", has_text="Confirm").count() == 0
    assert TierFloor.objects.filter(policy_domain="lab").exists()
    assert fits_the_width(page)
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "floors-390-proposed.png"))
    page.context.clear_cookies()
    sign_in(page, live_server.url, "safety-two")
    page.goto(live_server.url + "/floors/#floor-" + str(TierFloor.objects.get(policy_domain="lab").pk))
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "floors-390-to-confirm.png"))
    for width, locale in (
        (1440, "de-DE"),
        (390, "de-DE"),
        (1440, "en-GB"),
    ):  # the proposal as the second officer sees it
        other = page.context.browser.new_context(viewport={"width": width, "height": 900}, locale=locale)
        tab = other.new_page()
        sign_in(tab, live_server.url, "safety-two", then="/floors/")
        tab.locator("li.floor[data-floor='domain:lab']").scroll_into_view_if_needed()
        assert tab.locator("li.floor[data-floor='domain:lab'] .proposal form").count() == 2 and fits_the_width(tab)
        tab.screenshot(path=str(SCREENSHOTS / f"floors-{width}-{locale[:2]}-to-confirm.png"))
        other.close()
    card.locator("button", has_text="Confirm: remove domain:lab").click()
    page.wait_for_load_state()
    assert "Tier floor domain:lab removed" in page.locator(".messages").inner_text()
    assert page.locator("li.floor[data-floor='domain:lab']").count() == 0
    assert not TierFloor.objects.filter(policy_domain="lab").exists()

    page.click("[data-nav-toggle]")  # on a phone the language switch sits in the opened menu
    page.select_option("#language-switch", "de")
    page.wait_for_selector("h1:has-text('HITL-Mindeststufen')")
    assert fits_the_width(page)
    screenshot("floors-390-de")
    page.locator(".floor-form").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "floors-390-de-form.png"))
