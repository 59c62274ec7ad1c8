"""The approvers' pages, per persona: domain approver, approver of another domain, plain approver, requester."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client

from approvals.models import ApprovalRequest
from approvals.views import QUEUE_REFRESH_SECONDS

from .conftest import PATIENT, PRESCRIPTION_ARGS, Runtime

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_pages_need_a_signed_in_user(client: Client, runtime: Runtime) -> None:
    req = runtime.suspend()
    for url in ("/approvals/", "/approvals/history/", f"/approvals/{req['id']}/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_queue_shows_pending_requests_of_my_domains_readably(
    runtime: Runtime, approver: Any, django_assert_max_num_queries: Any
) -> None:
    req = runtime.suspend(dispatchMode="ambient")
    runtime.suspend(tool="createInvoiceDraft")  # billing: not anna's
    client = signed_in(approver)
    client.get("/approvals/history/")  # the first request after sign-in also saves the session
    # session, user, language preference, groups, the queue, the tier counts (+ slack for base.html)
    with django_assert_max_num_queries(8):
        body = client.get("/approvals/").content.decode()
    assert "prescribeMedication" in body and "createInvoiceDraft" not in body
    assert 'class="badge tier-high"' in body and "ambient" in body and "dr.house" in body
    # The patient id is shortened, with the full value on hover, never a wall of hex.
    assert "3f2a61d0…9c1d" in body and f'title="{PATIENT}"' in body
    assert f'href="/approvals/{req["id"]}/"' in body
    assert 'hx-trigger="every 3s"' in body


def test_the_queue_query_count_does_not_grow_with_the_queue(
    runtime: Runtime, approver: Any, django_assert_max_num_queries: Any
) -> None:
    for _ in range(30):
        runtime.suspend()
    client = signed_in(approver)
    client.get("/approvals/history/")
    with django_assert_max_num_queries(8):
        body = client.get("/approvals/").content.decode()
    assert body.count("data-request-row") == 30


def test_a_plain_approver_sees_nothing_and_the_header_counts_zero(runtime: Runtime, make_user: Any) -> None:
    """The approvals entry is there for every approver (issue 23: approvals are hard to find), counting what is
    theirs to decide: with no domain group, nothing."""
    runtime.suspend()
    client = signed_in(make_user("plain", "approver"))
    body = client.get("/approvals/").content.decode()
    assert "Nothing waits for you" in body and "prescribeMedication" not in body
    counts = client.get("/approvals/counts").content.decode()
    assert 'data-tier="high">high 0<' in counts and 'data-tier="low">low 0<' in counts


def test_someone_outside_approvals_gets_no_header_entry(runtime: Runtime, make_user: Any) -> None:
    runtime.suspend()
    client = signed_in(make_user("translator-1", "translator"))
    assert client.get("/approvals/counts").content.decode().strip() == ""


def test_the_counts_per_tier_are_in_every_page_context(runtime: Runtime, approver: Any, make_user: Any) -> None:
    runtime.suspend()
    runtime.suspend()
    runtime.suspend(tool="createInvoiceDraft")
    client = signed_in(approver)
    response = client.get("/approvals/history/")
    counts = response.context["approval_counts"]
    assert (counts.high, counts.low, counts.ungated, counts.total) == (2, 0, 0, 2)
    partial = client.get("/approvals/counts").content.decode()
    assert 'data-tier="high">high 2<' in partial and 'data-tier="low">low 0<' in partial
    queue = client.get("/approvals/").content.decode()
    assert "2 requests wait for you" in queue and "high 2" in queue


def test_the_poll_answers_204_while_nothing_changed_and_the_list_when_something_did(
    runtime: Runtime, approver: Any
) -> None:
    runtime.suspend()
    client = signed_in(approver)
    # The fingerprint also turns over every QUEUE_REFRESH_SECONDS (so the expiry countdown refreshes): start the
    # two requests early in a period, or the period itself would be the change this test sees.
    left = QUEUE_REFRESH_SECONDS - time.time() % QUEUE_REFRESH_SECONDS
    if left < 5:
        time.sleep(left + 0.1)
    page = client.get("/approvals/")
    fingerprint = page.context["fingerprint"]
    htmx = {"HX-Request": "true"}
    assert client.get("/approvals/", {"since": fingerprint}, headers=htmx).status_code == 204
    runtime.suspend()
    changed = client.get("/approvals/", {"since": fingerprint}, headers=htmx)
    body = changed.content.decode()
    assert changed.status_code == 200 and body.lstrip().startswith('<div id="queue"') and "<html" not in body
    assert body.count("data-request-row") == 2


def test_approve_from_the_list_swaps_the_row(runtime: Runtime, approver: Any, django_assert_num_queries: Any) -> None:
    req = runtime.suspend()
    client = signed_in(approver)
    client.get("/approvals/history/")  # the first request after sign-in also saves the session
    # user, groups, the request (once), then savepoint, UPDATE, audit INSERT, release (the session is cached)
    with django_assert_num_queries(7):
        response = client.post(
            f"/approvals/{req['id']}/decide", {"decision": "approve"}, headers={"HX-Request": "true"}
        )
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith(f'<tr id="req-{req["id"]}"')
    assert "approved by you at" in body
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "approved"


def test_the_second_approver_gets_an_answer_not_an_error_page(
    runtime: Runtime, approver: Any, second_approver: Any
) -> None:
    req = runtime.suspend()
    signed_in(approver).post(f"/approvals/{req['id']}/decide", {"decision": "approve"})
    client = signed_in(second_approver)
    row = client.post(
        f"/approvals/{req['id']}/decide", {"decision": "reject", "reason": "no"}, headers={"HX-Request": "true"}
    )
    assert row.status_code == 200 and "already approved by anna at" in row.content.decode()
    page = client.post(f"/approvals/{req['id']}/decide", {"decision": "reject", "reason": "no"}, follow=True)
    assert page.status_code == 200 and "already approved by anna at" in page.content.decode()


def test_reject_from_the_list_without_a_reason_asks_for_one(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    client = signed_in(approver)
    response = client.post(f"/approvals/{req['id']}/decide", {"decision": "reject"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    # The card again, its form still there, the error beside the reason field and focus on it.
    assert "Say why you reject this call" in body and f'id="reason-{req["id"]}_error"' in body
    assert 'aria-invalid="true"' in body and "autofocus" in body and 'value="reject"' in body
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"


def test_strangers_get_404_and_other_domain_approvers_cannot_decide(runtime: Runtime, make_user: Any) -> None:
    req = runtime.suspend()
    biller = signed_in(make_user("bill", "approver", "approver:billing"))
    assert biller.get(f"/approvals/{req['id']}/").status_code == 404
    assert biller.post(f"/approvals/{req['id']}/decide", {"decision": "approve"}).status_code == 404
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"


def test_a_safety_officer_reviews_without_deciding(runtime: Runtime, make_user: Any) -> None:
    req = runtime.suspend()
    officer = signed_in(make_user("olga", "safety-officer"))
    body = officer.get(f"/approvals/{req['id']}/").content.decode()
    assert "prescribeMedication" in body and "Approve as proposed" not in body
    assert officer.post(f"/approvals/{req['id']}/decide", {"decision": "approve"}).status_code == 403


def test_my_own_request_shows_but_cannot_be_decided_by_me(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend(requestedBy="anna")
    client = signed_in(approver)
    assert "Your own request: another approver decides it." in client.get("/approvals/").content.decode()
    detail = client.get(f"/approvals/{req['id']}/").content.decode()
    assert "another approver must decide it (four-eyes)" in detail and "Approve as proposed" not in detail
    assert client.post(f"/approvals/{req['id']}/decide", {"decision": "approve"}).status_code == 403


def test_the_detail_page_edits_arguments_against_the_schema(runtime: Runtime, make_user: Any) -> None:
    req = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    client = signed_in(make_user("pia", "approver", "approver:prescriptions"))
    page = client.get(f"/approvals/{req['id']}/")
    body = page.content.decode()
    assert "Approve with changes" in body and "Pharmazentralnummer (8 digits)" in body and "Pack size" in body
    form = {f"arg-{k}": v for k, v in PRESCRIPTION_ARGS.items()}
    bad = client.post(
        f"/approvals/{req['id']}/decide",
        {**form, "arg-pzn": "12", "edit": "1", "decision": "approve", "from": "detail"},
        follow=True,
    )
    assert "does not match" in bad.content.decode()
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"
    good = client.post(
        f"/approvals/{req['id']}/decide",
        {**form, "arg-packSize": "N2", "arg-autIdem": "unknown", "edit": "1", "decision": "approve", "from": "detail"},
        follow=True,
    )
    assert "approved with your changes by you" in good.content.decode()
    row = ApprovalRequest.objects.get(pk=req["id"])
    assert row.approved_args == {**PRESCRIPTION_ARGS, "packSize": "N2"} and row.args_edited
    detail = good.content.decode()
    assert "Proposed arguments" in detail and "Approved arguments" in detail and "edited by the approver" in detail


def test_bulk_approval_takes_tier_low_and_refuses_tier_high(runtime: Runtime, make_user: Any) -> None:
    user = make_user("hugo", "approver", "approver:billing", "approver:medication")
    low = [runtime.suspend(tool="createInvoiceDraft", args={"amount": n})["id"] for n in range(2)]
    high = runtime.suspend()["id"]
    response = signed_in(user).post("/approvals/bulk-approve", {"ids": [*low, high]}, follow=True)
    body = response.content.decode()
    assert "approved 2 tier-low requests" in body and "tier high: no bulk approval" in body
    states = {str(pk): s for pk, s in ApprovalRequest.objects.values_list("pk", "state")}
    assert states == {low[0]: "approved", low[1]: "approved", high: "pending"}


def test_history_lists_decisions_with_latency_and_filters(
    runtime: Runtime, approver: Any, django_assert_max_num_queries: Any
) -> None:
    a, b = runtime.suspend(), runtime.suspend()
    runtime.suspend()  # still pending: not history
    client = signed_in(approver)
    client.post(f"/approvals/{a['id']}/decide", {"decision": "approve"})
    client.post(f"/approvals/{b['id']}/decide", {"decision": "reject", "reason": "duplicate order"})
    with django_assert_max_num_queries(9):  # as the queue, plus the paginator's count
        body = client.get("/approvals/history/").content.decode()
    assert "2 requests" in body and "duplicate order" in body and " s</td>" in body
    rejected = client.get("/approvals/history/", {"state": "rejected"}, headers={"HX-Request": "true"})
    assert "1 request" in rejected.content.decode() and "duplicate order" in rejected.content.decode()
