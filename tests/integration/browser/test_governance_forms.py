"""The governance forms in a real browser, at 1440 and 390 px: a refused waiver keeps what was typed and shows why
beside the field, with the focus on it; a bulk waiver of a ticked group; the findings, tool and dashboard pages fit
a phone."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from catalog.models import Waiver
from tests.integration.browser.conftest import fits_the_width, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

WIDTHS = {"desktop": 1440, "phone": 390}


@pytest.fixture
def demo_loaded(demo_committed: None) -> None:
    pass


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_a_refused_waiver_shows_why_beside_the_field_which_has_the_focus(
    live_server: Any, demo_loaded: None, page: Any, screenshot: Any, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, live_server.url, "safety", then="/tools/condor/recordPayment/")
    page.select_option("#id_rule", "retry-declared-on-mutating")
    page.fill("#id_justification", "Gateway dedupes by payment id.")
    page.fill("#id_expires_on", (timezone.localdate() + timedelta(days=365)).isoformat())
    with page.expect_navigation():
        page.click("text=Grant waiver")
    error = page.locator("#id_expires_on_error")
    assert error.inner_text() == "at most 180 days ahead"
    assert page.evaluate("document.activeElement.id") == "id_expires_on"
    assert page.input_value("#id_justification") == "Gateway dedupes by payment id."
    field, message = page.locator("#id_expires_on").bounding_box(), error.bounding_box()
    assert 0 <= message["y"] - field["y"] < 120  # right under the field, not at the top of the page
    assert error.is_visible() and 0 <= message["y"] < page.viewport_size["height"]  # on screen
    assert fits_the_width(page) and Waiver.objects.count() == 0
    screenshot(f"helper-c-tool-waiver-refused-{width}")


def test_an_officer_waives_a_whole_group_in_one_go(
    live_server: Any, demo_loaded: None, page: Any, screenshot: Any
) -> None:
    page.set_viewport_size({"width": 390, "height": 860})
    sign_in(page, live_server.url, "safety", then="/findings/?rule=uuid-output-instruction")
    from playwright.sync_api import expect  # as conftest.py: only the browser tests need Playwright

    page.wait_for_load_state("load")  # console.js, which ticks the group, has run
    group = page.locator("section.finding-group")
    group.locator("[data-check-all]").check()
    expect(group.locator("input[name=findings]:checked")).to_have_count(4)
    page.click("summary >> text=Waive the ticked findings")
    page.fill("#id_justification", "UUID note ships with the next descriptor release.")
    screenshot("helper-c-findings-bulk-waive-390")
    with page.expect_navigation():
        page.click("text=Waive ticked findings")
    refusals = page.locator(".bulk-waive .errorlist").all_inner_texts()
    assert page.url.endswith("/findings/?rule=uuid-output-instruction"), refusals
    assert "4 waivers granted." in page.locator(".messages").inner_text()
    assert Waiver.objects.filter(rule="uuid-output-instruction").count() == 4
    assert page.locator("input[name=findings]").count() == 0  # nothing left to waive in the group


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
@pytest.mark.parametrize(
    ("name", "url"),
    [("findings", "/findings/"), ("tool", "/tools/condor/recordPayment/"), ("dashboard", "/")],
)
def test_governance_pages_fit_the_width(
    live_server: Any, demo_loaded: None, page: Any, screenshot: Any, width: int, name: str, url: str
) -> None:
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, live_server.url, "safety", then=url)
    screenshot(f"helper-c-{name}-{width}")
    assert fits_the_width(page), page.evaluate("document.documentElement.scrollWidth")
