"""Approvals on an approver's phone (390 px) and a desktop (1440 px), in real Chromium against the live server.

Issue 23: at 390 px the queue was 1,270 px wide with Approve / Reject off screen, and `j` then `a` approved a
high-tier prescription in two keystrokes.
"""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import ApprovalRequest
from tests.integration.browser.conftest import fits_the_width, sign_in
from tests.integration.browser.test_approvals_queue import PATIENT, suspend, token

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["token"]  # the fixture, shared with the queue's tests

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
PRESCRIPTION = {
    "patientId": PATIENT,
    "pzn": "01234567",
    "strength": "500 mg",
    "dosageInstructions": "1-0-1",
    "packSize": "N1",
}


def _fits(page: Any) -> None:
    """No sideways scroll; when there is, the message names the elements that stick out."""
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right
             > window.innerWidth + 1).slice(-5).map(e => e.tagName + '.' + e.className + ' ' + e.id)"""
    )
    assert fits_the_width(page), wide


def _inside_horizontally(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"], (selector, box)
    return box


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390", "1440"])
def test_the_queue_fits_the_screen_and_the_first_card_approves(
    live_server: Any, token: str, page: Any, screenshot: Any, size: dict[str, int]
) -> None:
    base = live_server.url
    page.set_viewport_size(size)
    first = suspend(base, token, f"phone-{size['width']}-1")
    suspend(base, token, f"phone-{size['width']}-2", runId="run-43", args={"patientId": PATIENT, "drug": "Ibuprofen"})
    sign_in(page, base, "approver", "/approvals/")
    card = page.locator(f"#req-{first['id']}")
    card.wait_for()
    _fits(page)
    approve = f"#req-{first['id']} button[value=approve]"
    box = _inside_horizontally(page, approve)
    _inside_horizontally(page, f"#req-{first['id']} button[value=reject]")
    text = card.inner_text()
    assert "prescribeMedication" in text and "3f2a61d0…9c1d" in text and "Amoxicillin" in text
    if size is PHONE:
        assert box["height"] >= 44  # a thumb's target
        # A card, not a table row: the header row is gone and the decision sits under the arguments.
        assert not page.locator("table.queue thead").is_visible()
        args = page.locator(f"#req-{first['id']} dl.args").bounding_box()
        assert args is not None and box["y"] > args["y"]
    screenshot(f"approvals-queue-{size['width']}")

    page.click(approve)  # a click is deliberate: no confirmation step for the mouse or the thumb
    page.locator(f"#req-{first['id']} .outcome").wait_for()
    assert "approved by you at" in card.inner_text()
    assert ApprovalRequest.objects.get(pk=first["id"]).state == "approved"
    _fits(page)
    screenshot(f"approvals-queue-{size['width']}-approved")


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390", "1440"])
def test_the_request_page_and_history_fit_the_screen(
    live_server: Any, token: str, page: Any, screenshot: Any, size: dict[str, int]
) -> None:
    base = live_server.url
    page.set_viewport_size(size)
    req = suspend(base, token, f"detail-{size['width']}", tool="create-prescription", args=PRESCRIPTION)
    assert req["policyDomain"] == "medication"  # the TUCAN category, mapped for the demo's approver
    sign_in(page, base, "approver", f"/approvals/{req['id']}/")
    page.locator("[data-context]").wait_for()
    screenshot(f"approvals-request-{size['width']}")
    _fits(page)
    _inside_horizontally(page, "#approve")
    assert (
        "the user explicitly asks to add, record or create a prescription"
        in page.locator("[data-use-when]").inner_text()
    )
    # What is proposed is read before the buttons that approve it, at every width (one column on a phone).
    a, b = page.locator("section.proposed").bounding_box(), page.locator("form.decide").bounding_box()
    assert a is not None and b is not None and b["y"] > a["y"] + a["height"] - 1

    # Approve with changes: a refused edit keeps what was typed, the error beside its field.
    page.fill("#id_arg-pzn", "123")
    page.fill("#id_edit_reason", "pack size corrected")
    page.click("#approve-edited")
    page.locator(".edit-args .errorlist").first.wait_for()
    assert page.input_value("#id_arg-pzn") == "123" and page.input_value("#id_edit_reason") == "pack size corrected"
    _fits(page)
    screenshot(f"approvals-request-{size['width']}-refused-edit")
    page.fill("#id_arg-pzn", "76543210")
    page.click("#approve-edited")
    page.locator("#state.state-approved").wait_for()
    stored = ApprovalRequest.objects.get(pk=req["id"])
    assert stored.args_edited and stored.approved_args["pzn"] == "76543210"

    page.goto(base + "/approvals/history/")
    _fits(page)
    assert "create-prescription" in page.locator("#results").inner_text()
    screenshot(f"approvals-history-{size['width']}")


def test_j_then_a_on_a_high_tier_request_asks_and_enter_approves(
    live_server: Any, token: str, page: Any, screenshot: Any
) -> None:
    base = live_server.url
    page.set_viewport_size(PHONE)
    req = suspend(base, token, "keys-1")
    sign_in(page, base, "approver", "/approvals/")
    page.locator(f"#req-{req['id']}").wait_for()
    approve = page.locator(f"#req-{req['id']} button[value=approve]")

    page.keyboard.press("j")
    page.keyboard.press("a")
    assert "Press Enter to approve prescribeMedication for 3f2a61d0…9c1d" in approve.inner_text()
    page.wait_for_timeout(1500)  # the old behaviour posted at once; nothing may have been decided
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"
    _fits(page)
    screenshot("approvals-confirm-390")

    page.keyboard.press("Escape")  # cancels: the button is itself again
    assert approve.inner_text() == "Approve"
    page.keyboard.press("a")
    page.keyboard.press("a")  # a second `a` is not the confirmation
    page.wait_for_timeout(500)
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"
    page.keyboard.press("Enter")
    page.locator(f"#req-{req['id']} .outcome").wait_for()
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "approved"


def test_a_safety_officer_reads_all_pending_on_a_phone_without_decision_buttons(
    live_server: Any, token: str, page: Any, screenshot: Any
) -> None:
    base = live_server.url
    page.set_viewport_size(PHONE)
    req = suspend(base, token, "officer-1")
    sign_in(page, base, "safety", "/approvals/")
    queue = page.locator("#queue")
    queue.wait_for()
    assert "All pending (1)" in queue.inner_text()
    page.click("text=All pending (1)")
    page.locator(f"#req-{req['id']}").wait_for()
    assert page.locator(f"#req-{req['id']} button").count() == 0
    assert "Read only" in page.locator(f"#req-{req['id']}").inner_text()
    assert page.locator("#bulk").count() == 0
    _fits(page)
    screenshot("approvals-all-pending-390")
