"""The runtime's tool call id (`toolCallId`, gen_ai.tool.call.id): kept on a suspended request, bound into its
replays, the one call a consume may spend the approval for; and what the telemetry ingest asks of spent approvals."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from approvals.models import ApprovalRequest
from approvals.selectors import spent_approvals
from approvals.services import approval_decide
from catalog.core import evidence
from catalog.core.evidence import SpentApproval
from catalog.models import AuditEvent

from .conftest import Runtime

pytestmark = pytest.mark.django_db


def consume(runtime: Runtime, req: dict[str, Any], **extra: Any) -> Any:
    return runtime.client.post(
        f"/api/v1/approvals/{req['id']}/consume",
        data={"argsSha256": req["argsSha256"], **extra},
        content_type="application/json",
        headers=runtime.headers,
    )


def approved(runtime: Runtime, approver: Any, **overrides: Any) -> dict[str, Any]:
    req = runtime.suspend(**overrides)
    approval_decide(request_id=req["id"], approver=approver, decision="approve")
    return req


def test_a_suspended_request_keeps_its_tool_call_id(runtime: Runtime) -> None:
    req = runtime.suspend(toolCallId="call_7Jd2")
    assert req["toolCallId"] == "call_7Jd2"
    assert ApprovalRequest.objects.get(pk=req["id"]).tool_call_id == "call_7Jd2"
    assert AuditEvent.objects.get(action="approvals.request.suspended").after["tool_call_id"] == "call_7Jd2"
    assert runtime.suspend()["toolCallId"] is None  # none sent, none named


def test_a_replay_must_repeat_the_tool_call_id(runtime: Runtime) -> None:
    first = runtime.suspend(idempotencyKey="run-1/call-1", toolCallId="call-1")
    again = runtime.evaluate(idempotencyKey="run-1/call-1", toolCallId="call-1")
    assert again.status_code == 200 and again.json()["request"]["id"] == first["id"]
    for other in ({"toolCallId": "call-2"}, {}):
        response = runtime.evaluate(idempotencyKey="run-1/call-1", **other)
        assert response.status_code == 409, response.content
        assert response.json()["errors"] == ["toolCallId: differs from the call this idempotencyKey was first used for"]
        assert "this call has a different toolCallId" in response.json()["detail"]
    assert ApprovalRequest.objects.count() == 1


def test_a_tool_call_id_is_bounded(runtime: Runtime) -> None:
    too_long = runtime.evaluate(toolCallId="c" * 201)
    assert too_long.status_code == 422 and "toolCallId" in too_long.content.decode()
    empty = runtime.evaluate(toolCallId="")
    assert empty.status_code == 422 and "toolCallId" in empty.content.decode()
    assert not ApprovalRequest.objects.exists()


def test_a_request_with_a_tool_call_is_consumed_for_that_call(runtime: Runtime, approver: Any) -> None:
    req = approved(runtime, approver, toolCallId="call-1")
    response = consume(runtime, req, toolCallId="call-1")
    assert response.status_code == 200 and response.json()["toolCallId"] == "call-1"
    event = AuditEvent.objects.get(action="approvals.request.consumed")
    assert event.after["tool_call_id"] == "call-1"


def test_a_consume_for_another_tool_call_is_refused_and_changes_nothing(runtime: Runtime, approver: Any) -> None:
    req = approved(runtime, approver, toolCallId="call-1")
    response = consume(runtime, req, toolCallId="call-2")
    assert response.status_code == 409
    body = response.json()
    assert body["reason"] == "tool-call-mismatch"
    assert "this approval is for tool call 'call-1', not 'call-2'" in body["detail"]
    row = ApprovalRequest.objects.get(pk=req["id"])
    assert (row.state, row.consumed_at, row.tool_call_id) == ("approved", None, "call-1")
    assert not AuditEvent.objects.filter(action="approvals.request.consumed").exists()
    assert consume(runtime, req, toolCallId="call-1").status_code == 200  # the right call still may


def test_a_consume_without_a_tool_call_id_still_spends_a_request_that_names_one(
    runtime: Runtime, approver: Any
) -> None:
    req = approved(runtime, approver, toolCallId="call-1")
    response = consume(runtime, req)
    assert response.status_code == 200 and response.json()["toolCallId"] == "call-1"
    assert AuditEvent.objects.get(action="approvals.request.consumed").after["tool_call_id"] == "call-1"


def test_a_request_without_a_tool_call_records_the_one_it_is_consumed_for(runtime: Runtime, approver: Any) -> None:
    req = approved(runtime, approver)
    response = consume(runtime, req, toolCallId="call-9")
    assert response.status_code == 200 and response.json()["toolCallId"] == "call-9"
    row = ApprovalRequest.objects.get(pk=req["id"])
    assert (row.state, row.tool_call_id) == ("consumed", "call-9")
    assert AuditEvent.objects.get(action="approvals.request.consumed").after["tool_call_id"] == "call-9"
    # Spent: a second consume, for this call or another, is refused as already consumed.
    again = consume(runtime, req, toolCallId="call-10")
    assert again.status_code == 409 and again.json()["reason"] == "already-consumed"


def test_a_consume_tool_call_id_is_bounded(runtime: Runtime, approver: Any) -> None:
    req = approved(runtime, approver)
    response = consume(runtime, req, toolCallId="c" * 201)
    assert response.status_code == 422 and "toolCallId" in response.content.decode()
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "approved"


# --- the spent-approval lookup of the telemetry ingest ---------------------------------------------------


@pytest.fixture
def spent(runtime: Runtime, approver: Any) -> dict[str, dict[str, Any]]:
    """A request consumed for a tool call, one consumed without one, one approved and not consumed."""
    with_call = approved(runtime, approver, toolCallId="call-a")
    assert consume(runtime, with_call).status_code == 200
    without = approved(runtime, approver)
    assert consume(runtime, without).status_code == 200
    unspent = approved(runtime, approver, toolCallId="call-b")
    return {"with_call": with_call, "without": without, "unspent": unspent}


def test_spent_approvals_finds_consumed_requests_by_tool_call_or_by_id(
    spent: dict[str, dict[str, Any]], django_assert_num_queries: Any
) -> None:
    tool_pk = ApprovalRequest.objects.get(pk=spent["with_call"]["id"]).tool_id
    without = spent["without"]["id"]
    with django_assert_num_queries(1):
        found = spent_approvals(["call-a", "call-b", "call-x"], [without, spent["unspent"]["id"]])
    assert sorted(found, key=lambda s: s.tool_call_id) == [
        SpentApproval(request_id=without, tool_call_id="", tool_pk=tool_pk),
        SpentApproval(request_id=spent["with_call"]["id"], tool_call_id="call-a", tool_pk=tool_pk),
    ]


def test_spent_approvals_answers_in_the_spelling_it_was_asked_and_ignores_what_is_no_uuid(
    spent: dict[str, dict[str, Any]], django_assert_max_num_queries: Any
) -> None:
    pk = spent["without"]["id"]
    upper = pk.upper()
    with django_assert_max_num_queries(1):
        found = spent_approvals([], [upper, pk, "not-a-uuid", "x" * 500, str(uuid.uuid4())])
    assert sorted(s.request_id for s in found) == sorted([upper, pk])
    with django_assert_max_num_queries(0):
        assert spent_approvals([], ["not-a-uuid"]) == []
        assert spent_approvals([""], []) == []


def test_the_approvals_app_answers_the_ingests_question(spent: dict[str, dict[str, Any]]) -> None:
    """Registered when the app starts (approvals/apps.py): the port catalog.core.evidence asks it."""
    found = evidence.spent_approvals({"call-a"}, set())
    assert [s.request_id for s in found] == [spent["with_call"]["id"]]
