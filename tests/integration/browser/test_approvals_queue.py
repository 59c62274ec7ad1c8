"""An approver's queue in real Chromium, with the runtime on the other side of the real HTTP API."""

from __future__ import annotations

import json
import threading
import urllib.request
from typing import Any

import pytest

from approvals.models import ApprovalRequest
from catalog.models import ApiToken

pytestmark = pytest.mark.django_db(transaction=True)
PATIENT = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"


@pytest.fixture
def token(demo_committed: None) -> str:
    raw = ApiToken.generate()
    ApiToken.objects.create(name="runtime", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=["approvals"])
    return raw


def call(base: str, token: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    request = urllib.request.Request(
        base + "/api/v1/approvals" + path,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the live test server
        return json.loads(response.read())


def suspend(base: str, token: str, key: str, **overrides: Any) -> dict[str, Any]:
    body = {
        "tool": "prescribeMedication",
        "profile": "clinical-production",
        "dispatchMode": "supervised",
        "runId": "run-42",
        "requestedBy": "dr.house",
        "patientRef": PATIENT,
        "args": {"patientId": PATIENT, "drug": "Amoxicillin", "dose": "500 mg", "route": "oral"},
        "idempotencyKey": key,
        **overrides,
    }
    answer = call(base, token, "POST", "/evaluate", body)
    assert answer["decision"] == "suspend"
    return answer["request"]


def sign_in(page: Any, base: str, username: str) -> None:
    page.goto(base + "/login/?next=/approvals/")
    page.fill("#id_username", username)
    page.fill("#id_password", "condor-demo")
    page.click("button[type=submit]")
    page.wait_for_url("**/approvals/")


def test_a_request_appears_without_reload_is_approved_and_the_long_poll_returns_approved(
    live_server: Any, token: str, page: Any, screenshot: Any
) -> None:
    base = live_server.url
    sign_in(page, base, "approver")
    assert "Nothing waits for you" in page.locator("#queue").inner_text()
    page.evaluate("window.notReloaded = true")

    req = suspend(base, token, "browser-1")
    answer: dict[str, Any] = {}
    poll = threading.Thread(target=lambda: answer.update(call(base, token, "GET", f"/{req['id']}?wait=30")))
    poll.start()

    row = page.locator(f"#req-{req['id']}")
    row.wait_for(timeout=15_000)  # the htmx poll brings it in
    assert page.evaluate("window.notReloaded") is True
    text = row.inner_text()
    assert "prescribeMedication" in text and "high" in text and "dr.house" in text and "supervised" in text
    assert "3f2a61d0…9c1d" in text and PATIENT not in text  # ids shortened, the full value on hover
    assert row.locator(f"[title='{PATIENT}']").count() >= 1
    screenshot("approvals-queue")

    row.locator("button[value=approve]").click()
    page.locator(f"#req-{req['id']} .outcome").wait_for()
    assert "approved by you at" in page.locator(f"#req-{req['id']}").inner_text()
    screenshot("approvals-approved")

    poll.join(timeout=40)
    assert answer["state"] == "approved" and answer["decidedBy"] == "approver"
    assert answer["approvedArgsSha256"] == req["argsSha256"]
    consumed = call(base, token, "POST", f"/{req['id']}/consume", {"argsSha256": answer["approvedArgsSha256"]})
    assert consumed["state"] == "consumed"


def test_keyboard_reject_asks_for_the_reason_first(live_server: Any, token: str, page: Any, screenshot: Any) -> None:
    base = live_server.url
    req = suspend(base, token, "browser-2")
    sign_in(page, base, "approver")
    row = page.locator(f"#req-{req['id']}")
    row.wait_for()
    page.keyboard.press("j")  # focus the first request
    page.keyboard.press("r")  # no reason yet: the reason field takes focus
    reason = page.locator(f"#reason-{req['id']}")
    assert reason.evaluate("el => el === document.activeElement")
    page.keyboard.type("Duplicate of this morning's prescription")
    page.keyboard.press("Enter")
    page.locator(f"#req-{req['id']} .outcome").wait_for()
    assert "rejected by you at" in row.inner_text()
    stored = ApprovalRequest.objects.get(pk=req["id"])
    assert stored.state == "rejected" and stored.decision_reason == "Duplicate of this morning's prescription"
    screenshot("approvals-rejected-by-keyboard")


def test_the_detail_page_shows_the_arguments_and_approves_with_a_then_enter(
    live_server: Any, token: str, page: Any, screenshot: Any
) -> None:
    base = live_server.url
    req = suspend(base, token, "browser-3")
    sign_in(page, base, "approver")
    page.click(f"#req-{req['id']} a[data-open]")
    page.wait_for_url(f"**/approvals/{req['id']}/")
    assert "Proposed arguments" in page.content() and PATIENT in page.locator(".args").first.inner_text()
    screenshot("approvals-detail")
    page.keyboard.press("a")  # tier high: the button asks first
    assert "Press Enter to approve prescribeMedication" in page.locator("#approve").inner_text()
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"
    page.keyboard.press("Enter")
    page.locator("#state.state-approved").wait_for()  # back on the page, now showing the approved arguments
    assert "approved by you" in page.locator(".messages").inner_text()
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "approved"
    screenshot("approvals-detail-approved")
