"""The translator's workspace in real Chromium: fix a placeholder error in the matrix without a reload."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from catalog.cards.services.demo import cards_demo_load

pytestmark = pytest.mark.django_db(transaction=True)
KEY = "card.medication.warning.interaction"


@pytest.fixture
def demo_cards(transactional_db: Any) -> None:
    cards_demo_load()
    user = get_user_model().objects.create_user("translator", password="condor-demo")
    user.groups.set([Group.objects.get_or_create(name="translator")[0]])


def sign_in(page: Any, base: str, username: str) -> None:
    page.goto(base + "/cards/")
    assert "/login/" in page.url
    page.fill("#id_username", username)
    page.fill("#id_password", "condor-demo")
    page.click("button[type=submit]")
    page.wait_for_load_state()


def test_a_translator_fixes_a_placeholder_error_without_a_reload(
    live_server: Any, demo_cards: None, page: Any, screenshot: Any
) -> None:
    sign_in(page, live_server.url, "translator")
    page.goto(live_server.url + "/cards/?check=placeholder&locale=de")
    row = page.locator("#cards-table tr", has_text=KEY)
    cell = row.locator("td[data-locale=de]")
    assert cell.locator("[data-check=placeholder]").count() == 1
    page.evaluate("window.__sameDocument = true")  # gone if anything reloads the page

    cell.locator("a").click()
    editor = page.locator("#cards-panel textarea[name=form]")
    editor.wait_for()
    assert "{arzneimittel}" in editor.input_value()
    assert page.locator("#cards-checks [data-check=placeholder]").count() == 1
    assert page.locator("#cards-panel").get_by_text("{drug}").first.is_visible()  # the placeholders of the English

    editor.fill("Mögliche Wechselwirkung mit {drug}")
    page.locator("#cards-checks [data-check=placeholder]").wait_for(state="detached")  # checked as typed
    assert "Wechselwirkung mit Metformin 500 mg" in page.locator("#cards-checks").inner_text()
    screenshot("cards-panel-fixing-en")

    page.click("#cards-editor button[value=save]")
    page.locator("#cards-panel [role=status]").wait_for()
    assert cell.locator("[data-check=placeholder]").count() == 0  # the row was swapped in place
    assert "Mögliche Wechselwirkung mit {drug}" in cell.inner_text()
    assert page.evaluate("window.__sameDocument === true")
    screenshot("cards-matrix-fixed-en")


def test_the_workspace_and_coverage_in_german(live_server: Any, demo_cards: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "translator")
    with page.expect_navigation():  # the switch submits itself
        page.select_option("#language-switch", "de")
    page.goto(live_server.url + "/cards/?locale=de&check=any&key=hitl.warning.highTier&lang=de")
    assert page.locator("h1").inner_text() == "Kartentexte"
    assert page.locator("#cards-checks [data-check=markup]").count() == 1
    screenshot("cards-matrix-de")
    page.click("text=FHIR-Statusabdeckung")
    page.wait_for_load_state()
    assert "waitlist" in page.locator("table.coverage").inner_text()
    screenshot("cards-coverage-de")


def test_a_refused_review_says_why_on_screen(live_server: Any, demo_cards: None, page: Any, screenshot: Any) -> None:
    """The page was opened before the reviewer became the translation's author (say, in another tab): the button is
    still there, the server refuses it (four eyes, 403), and the refusal is shown where they clicked."""
    from catalog.cards.services.translations import translation_save
    from catalog.models import CardTranslation

    translator = get_user_model().objects.get(username="translator")
    reviewer = get_user_model().objects.create_user("reviewer", password="condor-demo")
    reviewer.groups.set([Group.objects.get_or_create(name=n)[0] for n in ("translator", "translator-reviewer")])
    translation_save(user=translator, key="card.medication.title", locale="de", forms=["Medikamente"])
    sign_in(page, live_server.url, "reviewer")
    page.goto(live_server.url + "/cards/?key=card.medication.title&lang=de")
    button = page.locator("#cards-panel button", has_text="Mark reviewed")
    assert button.is_visible()

    translation_save(user=reviewer, key="card.medication.title", locale="de", forms=["Medikation"])
    button.click()
    alert = page.locator("#cards-panel [role=alert]")
    alert.wait_for()
    assert "HTTP 403" in alert.inner_text() and "another reviewer must review it" in alert.inner_text()
    assert CardTranslation.objects.get(string__key="card.medication.title", locale__code="de").state == "translated"
    screenshot("cards-review-refused-en")


def test_on_a_phone_a_tapped_cell_opens_the_panel_in_view(
    live_server: Any, demo_cards: None, page: Any, screenshot: Any
) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server.url, "translator")
    cell = page.locator("#cards-table tbody tr").nth(30).locator("td[data-locale=de] a")
    cell.scroll_into_view_if_needed()
    cell.click()
    page.locator("#cards-panel textarea[name=form]").wait_for()
    top = page.evaluate("document.getElementById('cards-panel').getBoundingClientRect().top")
    assert 0 <= top < 844  # the panel is on screen, not thirty rows away
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot("cards-panel-phone-en")
