"""Runtime health and the unknown-names board in real Chromium, on the demo's week of made-up telemetry: an on-call
engineer marks a hallucinated name an alias of a real tool (a wrong tool first, refused beside the field), then
reads a tool's and its team's health; at 1440 and 390 px wide, nothing scrolls sideways. Screenshots:
screenshots/usage-*.png."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Sum

from catalog.models import Tool, UnknownToolName
from tests.integration.browser.conftest import SCREENSHOTS, fits_the_width, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo(demo_committed: None) -> Tool:
    """The demo as `make run` loads it; returns the tool the runtime called most."""
    busiest = (
        Tool.objects.live()
        .filter(owner__isnull=False)
        .annotate(n=Sum("usage__calls"))
        .filter(n__gt=0)
        .order_by("-n", "declared_id")
        .select_related("owner")
        .first()
    )
    assert busiest is not None, "the demo telemetry called no tool"
    return busiest


def test_on_call_judges_a_hallucinated_name_and_reads_tool_health(
    live_server: Any, demo: Tool, page: Any, screenshot: Any
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, live_server.url, "oncall")
    page.click("nav details.more summary")  # the less daily pages sit under More
    page.click("nav >> text=Unknown names")
    page.wait_for_url("**/usage/unknown/")
    row = page.locator("tr[data-name='get_clinical_notes']")
    assert "tool call" in row.inner_text()
    closest = row.locator("td[data-label='Closest tool'] a.mono").inner_text()
    assert closest.startswith("condor:") or closest.startswith("tucan:")
    assert row.locator("input[name=alias_of]").input_value() == closest  # the suggestion is in the field
    assert page.locator("tr[data-name='open_panel'] >> text=dropped UI action").count() == 1
    screenshot("usage-unknown-1440")

    # A tool that is not there is refused beside the field; what was typed stays.
    row.locator("input[name=alias_of]").fill("getClinicalNotez")
    row.locator("button[value=alias]").click()
    page.wait_for_load_state()
    row = page.locator("tr[data-name='get_clinical_notes']")
    assert "no live tool is called getClinicalNotez" in row.locator(".errorlist").inner_text()
    assert row.locator("input[name=alias_of]").input_value() == "getClinicalNotez"
    screenshot("usage-unknown-refused-1440")

    row.locator("input[name=alias_of]").fill(closest)
    row.locator("button[value=alias]").click()
    page.wait_for_url("**/usage/unknown/")
    assert "get_clinical_notes marked as an alias of" in page.locator(".messages").inner_text()
    page.click(".board-filters >> text=Should be an alias")
    advice = page.locator("tr[data-name='get_clinical_notes'] .advice").inner_text()
    assert advice.startswith("Add get_clinical_notes to the aliases of") and "then re-import" in advice
    assert UnknownToolName.objects.get(name="get_clinical_notes").alias_of is not None
    screenshot("usage-unknown-alias-1440")

    tool_url = f"{live_server.url}/tools/{demo.system}/{demo.declared_id}/"
    team_url = f"{live_server.url}/teams/{demo.owner.slug}/"
    page.goto(tool_url + "#health")
    health = page.locator("#health")
    assert health.locator("svg.bar-chart[role=img]").count() == 2
    assert "In all: calls" in (health.locator("svg.bar-chart").first.get_attribute("aria-label") or "")
    assert health.locator("table.executions tbody tr").count() > 0
    health.screenshot(path=str(SCREENSHOTS / "usage-tool-health-1440.png"))
    page.goto(team_url)
    assert page.locator(f"#health tr[data-tool='{demo.system}:{demo.declared_id}']").count() == 1
    page.locator("#health").screenshot(path=str(SCREENSHOTS / "usage-team-health-1440.png"))
    page.goto(live_server.url + "/")
    page.locator("section.health").screenshot(path=str(SCREENSHOTS / "usage-dashboard-1440.png"))

    page.set_viewport_size({"width": 390, "height": 844})
    for name, url in (
        ("unknown", live_server.url + "/usage/unknown/?show=all"),
        ("tool", tool_url),
        ("team", team_url),
        ("dashboard", live_server.url + "/"),
    ):
        page.goto(url)
        page.wait_for_load_state()
        assert fits_the_width(page), name
        screenshot(f"usage-{name}-390")
    # What a phone shows (the viewport) where each section begins.
    for name, url in (("tool-health", tool_url), ("team-health", team_url)):
        page.goto(url)
        page.locator("#health").evaluate("section => section.scrollIntoView()")
        page.screenshot(path=str(SCREENSHOTS / f"usage-{name}-390.png"))
        page.locator("#health h3").last.evaluate("h => h.scrollIntoView()")
        page.screenshot(path=str(SCREENSHOTS / f"usage-{name}-390-more.png"))
