"""A refused decision re-renders the page (400) with what was typed, the error beside its field in the person's
language and focus on it (issue 23, item 2). Nothing is decided by a refused form."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.models import ApprovalRequest

from .conftest import PRESCRIPTION_ARGS, Runtime

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_reject_without_a_reason_on_the_request_page_keeps_the_page_and_asks_beside_the_field(
    runtime: Runtime, approver: Any
) -> None:
    req = runtime.suspend()
    response = signed_in(approver).post(
        f"/approvals/{req['id']}/decide", {"decision": "reject", "reason": "  ", "from": "detail"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert '<ul class="errorlist" id="id_reason_error">' in body and "Say why you reject this call" in body
    field = body[body.index('name="reason"') - 200 : body.index('name="reason"') + 300]
    assert 'aria-invalid="true"' in field and 'aria-describedby="id_reason_error"' in field and "autofocus" in field
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"


def test_the_error_is_in_the_persons_language(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    response = signed_in(approver).post(
        f"/approvals/{req['id']}/decide", {"decision": "reject", "from": "detail"}, headers={"Accept-Language": "de"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "Say why you reject" not in body and "Begründung" in body


def test_a_refused_edit_keeps_every_typed_value_with_the_error_beside_its_field(
    runtime: Runtime, make_user: Any
) -> None:
    req = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    client = signed_in(make_user("pia", "approver", "approver:prescriptions"))
    form = {f"arg-{k}": v for k, v in PRESCRIPTION_ARGS.items()}
    response = client.post(
        f"/approvals/{req['id']}/decide",
        {
            **form,
            "arg-pzn": "12",
            "arg-dosageInstructions": "1-1-1",
            "edit": "1",
            "decision": "approve",
            "from": "detail",
            "reason": "dose corrected",
        },
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert 'value="12"' in body and 'value="1-1-1"' in body and 'value="dose corrected"' in body
    assert '<ul class="errorlist" id="id_arg-pzn_error">' in body and "does not match" in body
    pzn = body[body.index('id="id_arg-pzn"') - 200 : body.index('id="id_arg-pzn"') + 200]
    assert 'aria-invalid="true"' in pzn and "autofocus" in pzn
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"


def test_bulk_approval_with_nothing_selected_keeps_the_reason_and_says_what_to_do(
    runtime: Runtime, make_user: Any
) -> None:
    user = make_user("hugo", "approver", "approver:billing")
    low = runtime.suspend(tool="createInvoiceDraft", args={"amount": 1})["id"]
    response = signed_in(user).post("/approvals/bulk-approve", {"reason": "month-end run"})
    assert response.status_code == 400
    body = response.content.decode()
    assert 'value="month-end run"' in body and '<ul class="errorlist" id="bulk_reason_error">' in body
    assert "Select at least one tier-low request" in body and f"req-{low}" in body  # the queue, not a redirect
    assert ApprovalRequest.objects.get(pk=low).state == "pending"


def test_bulk_approval_stays_tier_low_only(runtime: Runtime, make_user: Any) -> None:
    user = make_user("hugo", "approver", "approver:billing", "approver:medication")
    high = runtime.suspend()["id"]
    body = signed_in(user).post("/approvals/bulk-approve", {"ids": [high]}, follow=True).content.decode()
    assert "tier high: no bulk approval" in body
    assert ApprovalRequest.objects.get(pk=high).state == "pending"
