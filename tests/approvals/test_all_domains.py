"""Approvals for everyone who may see them (issue 23, items 3 and 6): safety officers and superusers read every
pending request, are told how many there are, and are offered no decision they may not take."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, RequestFactory

from approvals.context_processors import approval_counts
from approvals.models import ApprovalRequest

from .conftest import Runtime

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_safety_officer_is_told_how_many_wait_in_all_domains_and_reads_them(
    runtime: Runtime, make_user: Any, django_assert_max_num_queries: Any
) -> None:
    high = runtime.suspend()
    low = runtime.suspend(tool="createInvoiceDraft")
    officer = signed_in(make_user("olga", "safety-officer"))
    mine = officer.get("/approvals/").content.decode()
    assert "0 requests wait for you" in mine and "All pending (2)" in mine
    with django_assert_max_num_queries(9):
        body = officer.get("/approvals/?all=1").content.decode()
    assert "2 requests are pending in all domains" in body
    assert f'id="req-{high["id"]}"' in body and f'id="req-{low["id"]}"' in body
    assert 'value="approve"' not in body and 'id="bulk"' not in body and "Read only" in body
    counts = officer.get("/approvals/counts").content.decode()
    assert "all domains 2" in counts and "?all=1" in counts


def test_the_all_view_is_not_for_approvers_of_one_domain(runtime: Runtime, approver: Any) -> None:
    runtime.suspend(tool="createInvoiceDraft")
    body = signed_in(approver).get("/approvals/?all=1").content.decode()
    assert "createInvoiceDraft" not in body and "All pending" not in body


def test_a_superuser_reads_a_request_page_without_decision_buttons(runtime: Runtime, make_user: Any) -> None:
    req = runtime.suspend()
    admin = signed_in(make_user("root", is_superuser=True, is_staff=True))
    response = admin.get(f"/approvals/{req['id']}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "prescribeMedication" in body and "data-read-only" in body and "Approve as proposed" not in body
    assert admin.post(f"/approvals/{req['id']}/decide", {"decision": "approve"}).status_code == 403
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"


@pytest.mark.parametrize(
    ("groups", "superuser", "visible", "all_pending"),
    [
        (("approver", "approver:medication"), False, True, None),
        (("approval-escalation",), False, True, None),
        (("safety-officer",), False, True, 1),
        ((), True, True, 1),
        (("translator",), False, False, None),
    ],
)
def test_the_header_entry_is_for_approvers_escalation_officers_and_superusers(
    runtime: Runtime, make_user: Any, groups: tuple[str, ...], superuser: bool, visible: bool, all_pending: Any
) -> None:
    runtime.suspend()
    request = RequestFactory().get("/")
    request.user = make_user("someone", *groups, is_superuser=superuser)
    counts = approval_counts(request)["approval_counts"]
    assert counts.visible is visible and counts.all_pending == all_pending


def test_the_dashboard_tells_a_safety_officer_what_waits_in_all_domains(runtime: Runtime, make_user: Any) -> None:
    runtime.suspend()
    runtime.suspend(tool="createInvoiceDraft")
    body = signed_in(make_user("olga", "safety-officer")).get("/").content.decode()
    assert "2 requests are pending in all domains" in body and "/approvals/?all=1" in body
    assert "0 requests wait for you" not in body  # the misleading zero the issue saw
