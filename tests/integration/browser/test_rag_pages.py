"""An on-call engineer asks the playground why a tool was not picked, in a real browser."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import tasks_in_process
from tests.integration.browser.conftest import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo_embedded(demo_committed: None) -> Iterator[None]:
    """The demo as `make run` loads it (its tools embedded), and tasks in-process while the test runs."""
    with tasks_in_process():
        yield


def test_playground_resolves_in_place_and_explains_a_missing_tool(
    live_server: Any, demo_embedded: None, page: Any, screenshot: Any
) -> None:
    sign_in(page, live_server.url, "oncall")
    page.click("nav details.more summary")  # Tool-RAG sits in the header's "More" menu
    page.click("nav >> text=Tool-RAG")
    assert "431 of 431 tools embedded" in page.inner_text("main")
    page.fill("textarea[name=prompt]", "Blutdruck und Puls für Zimmer 4 eintragen")
    page.check("input[name=attachments]")
    page.fill("input[name=why_not]", "createInvoiceDraft")
    page.click("button:has-text('Resolve')")
    page.wait_for_url("**prompt=**")
    result = page.locator("#rag-result")
    result.locator("table.candidates").wait_for()
    rows = result.locator("table.candidates tbody tr")
    assert "read.attachment" in rows.nth(0).inner_text() and "forced-floor" in rows.nth(0).inner_text()
    assert "record.vitals" in result.inner_text()
    assert "createInvoiceDraft ranked" in result.inner_text()
    # The why-not answer shows each signal's score and rank for the tool.
    explained = result.locator("table.signals").first
    assert "create.invoice.draft" in explained.inner_text() and "#" in explained.inner_text()
    screenshot("rag-playground")

    page.click("text=Retrieval quality")
    page.wait_for_load_state()
    screenshot("rag-quality-empty")


def test_a_safety_officer_runs_the_case_set(live_server: Any, demo_embedded: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "safety")
    page.goto(live_server.url + "/rag/quality/")
    page.click("button:has-text('Run the case set now')")
    page.wait_for_load_state()
    text = page.inner_text("main")
    assert "Evaluated" in text and "recall@5" in text and "condor r2" in text
    screenshot("rag-quality")
