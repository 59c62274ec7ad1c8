"""GET (and long-poll), consume and cancel: the runtime's side of a request after it was suspended."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.db import connections
from django.db.backends.signals import connection_created
from django.utils import timezone

from approvals.domain import args_sha256
from approvals.models import ApprovalRequest
from approvals.selectors import request_get, request_state
from approvals.services import approval_decide
from catalog.models import AuditEvent
from tests.conftest import requires_postgres

from .conftest import PRESCRIPTION_ARGS, Runtime

pytestmark = pytest.mark.django_db


def approve(req: dict[str, Any], approver: Any, **kwargs: Any) -> ApprovalRequest:
    return approval_decide(request_id=req["id"], approver=approver, decision="approve", **kwargs)


def test_get_answers_the_state(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    assert runtime.get(req["id"]).json()["state"] == "pending"
    approve(req, approver, reason="dose checked")
    body = runtime.get(req["id"]).json()
    assert body["state"] == "approved" and body["decidedBy"] == "anna" and body["reason"] == "dose checked"
    assert body["approvedArgs"] == req["args"] and body["approvedArgsSha256"] == req["argsSha256"]


def test_get_of_an_unknown_request_is_a_404(runtime: Runtime) -> None:
    for request_id in ("not-a-uuid", "6d0c1d7e-0000-4000-8000-000000000000"):
        response = runtime.get(request_id)
        assert response.status_code == 404 and response.json()["reason"] == "not-found"


def test_wait_is_capped_at_30_seconds(runtime: Runtime) -> None:
    req = runtime.suspend()
    response = runtime.get(req["id"], wait=31)
    assert response.status_code == 422 and "wait: between 0 and 30 seconds" in response.json()["detail"]


def test_a_past_due_pending_request_reads_as_expired_before_the_beat_marks_it(runtime: Runtime) -> None:
    req = runtime.suspend()
    ApprovalRequest.objects.filter(pk=req["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert runtime.get(req["id"], wait=5).json()["state"] == "expired"  # and returns at once
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"


def test_a_long_poll_on_a_pending_request_reads_about_once_a_second(
    runtime: Runtime, django_assert_max_num_queries: Any
) -> None:
    req = runtime.suspend()
    with django_assert_max_num_queries(8):  # auth (2) + one state read per second + the final read
        body = runtime.get(req["id"], wait=2).json()
    assert body["state"] == "pending"


def test_a_request_is_read_as_the_orm_reads_it(runtime: Runtime, approver: Any) -> None:
    """request_get finds a request by its UUID as the backend stores UUIDs."""
    pending, approved = runtime.suspend(), runtime.suspend()
    approve(approved, approver)
    for req in (pending, approved):
        stored = ApprovalRequest.objects.select_related("tool", "decided_by").get(pk=req["id"])
        for key in (req["id"], uuid.UUID(req["id"])):
            got = request_get(key)
            assert got is not None
            assert [getattr(got, f.attname) for f in ApprovalRequest._meta.concrete_fields] == [
                getattr(stored, f.attname) for f in ApprovalRequest._meta.concrete_fields
            ]
            assert got.tool == stored.tool and got.decided_by == stored.decided_by
            assert request_state(uuid.UUID(req["id"])) == (stored.state, stored.expires_at)
    assert request_get(uuid.uuid4()) is None and request_get("not-a-uuid") is None
    assert request_state(uuid.uuid4()) is None


def test_a_plain_poll_reads_the_request_once(runtime: Runtime, approver: Any, django_assert_num_queries: Any) -> None:
    req = runtime.suspend()
    approve(req, approver)
    runtime.get(req["id"])  # the token's last use is written at most once a minute: not in the count below
    with django_assert_num_queries(2):  # the token; the request with its tool and approver
        body = runtime.get(req["id"]).json()
    assert body["state"] == "approved" and body["decidedBy"] == "anna"


def test_consume_succeeds_once_for_the_approved_hash(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    approve(req, approver)
    first = runtime.consume(req["id"], req["argsSha256"])
    assert first.status_code == 200 and first.json()["state"] == "consumed" and first.json()["consumedAt"]
    second = runtime.consume(req["id"], req["argsSha256"])
    assert second.status_code == 409
    assert second.json()["reason"] == "already-consumed"
    assert "already consumed: the call ran once and must not run again" in second.json()["detail"]
    assert AuditEvent.objects.filter(action="approvals.request.consumed").count() == 1


@pytest.mark.parametrize(
    ("prepare", "reason", "detail"),
    [
        ("pending", "not-decided", "still pending: wait for the decision"),
        ("rejected", "rejected", "was rejected: do not execute"),
        ("expired", "expired", "expired without a decision"),
        ("cancelled", "cancelled", "was cancelled: do not execute"),
        ("mismatch", "args-mismatch", "is not the hash of the approved arguments"),
        ("lapsed", "approval-lapsed", "lapsed unused"),
    ],
)
def test_consume_refusals_say_why(runtime: Runtime, approver: Any, prepare: str, reason: str, detail: str) -> None:
    req = runtime.suspend()
    sha = req["argsSha256"]
    if prepare == "rejected":
        approval_decide(request_id=req["id"], approver=approver, decision="reject", reason="wrong patient")
    elif prepare == "expired":
        ApprovalRequest.objects.filter(pk=req["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    elif prepare == "cancelled":
        runtime.cancel(req["id"])
    elif prepare == "mismatch":
        approve(req, approver)
        sha = args_sha256({"drug": "amoxicillin", "dose": "5000 mg"})
    elif prepare == "lapsed":
        approve(req, approver)
        ApprovalRequest.objects.filter(pk=req["id"]).update(consumable_until=timezone.now() - timedelta(seconds=1))
    response = runtime.consume(req["id"], sha)
    assert response.status_code == 409
    body = response.json()
    assert body["reason"] == reason and detail in body["detail"]
    assert body["request"]["id"] == req["id"]
    assert ApprovalRequest.objects.get(pk=req["id"]).consumed_at is None


def test_consume_needs_a_sha256(runtime: Runtime) -> None:
    req = runtime.suspend()
    response = runtime.consume(req["id"], "abc")
    assert response.status_code == 422 and any("argsSha256" in e for e in response.json()["errors"])


def test_approval_with_changes_is_consumed_with_the_edited_hash_only(runtime: Runtime, make_user: Any) -> None:
    approver = make_user("pia", "approver:prescriptions")
    req = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    edited = {**PRESCRIPTION_ARGS, "packSize": "N2"}
    approve(req, approver, approved_args=edited, reason="N2 is the pack on stock")
    body = runtime.get(req["id"]).json()
    assert body["argsEdited"] is True and body["approvedArgs"]["packSize"] == "N2"
    assert body["args"]["packSize"] == "N1"  # the proposal stays beside the approval
    assert body["approvedArgsSha256"] == args_sha256(edited) != body["argsSha256"]
    refused = runtime.consume(req["id"], body["argsSha256"])
    assert refused.status_code == 409 and "the approver may have edited them" in refused.json()["detail"]
    assert runtime.consume(req["id"], args_sha256(edited)).status_code == 200


def test_cancel_withdraws_a_pending_request_and_is_safe_to_retry(runtime: Runtime) -> None:
    req = runtime.suspend()
    first = runtime.cancel(req["id"], "the clinician closed the chat")
    assert first.status_code == 200 and first.json()["state"] == "cancelled"
    assert first.json()["reason"] == "the clinician closed the chat"
    assert runtime.cancel(req["id"]).status_code == 200
    assert AuditEvent.objects.filter(action="approvals.request.cancelled").count() == 1


def test_cancel_withdraws_an_unused_approval(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    approve(req, approver)
    assert runtime.cancel(req["id"]).json()["state"] == "cancelled"
    assert runtime.consume(req["id"], req["argsSha256"]).json()["reason"] == "cancelled"


@pytest.mark.parametrize(
    ("prepare", "detail"),
    [
        ("consumed", "already consumed: the call ran; nothing to cancel"),
        ("rejected", "already rejected by anna"),
        ("expired", "expired at"),
    ],
)
def test_cancel_of_a_finished_request_is_a_409(runtime: Runtime, approver: Any, prepare: str, detail: str) -> None:
    req = runtime.suspend()
    if prepare == "consumed":
        approve(req, approver)
        runtime.consume(req["id"], req["argsSha256"])
    elif prepare == "rejected":
        approval_decide(request_id=req["id"], approver=approver, decision="reject", reason="no")
    else:
        ApprovalRequest.objects.filter(pk=req["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = runtime.cancel(req["id"])
    assert response.status_code == 409 and detail in response.json()["detail"]


def long_poll_while(runtime: Runtime, request_id: str, wait: int, after: float, action: Callable[[], object]) -> Any:
    """GET ?wait=… while `action` runs in another thread `after` seconds in (with its own connections)."""

    def run() -> None:
        try:
            action()
        finally:
            connections.close_all()

    timer = threading.Timer(after, run)
    timer.start()
    try:
        return runtime.get(request_id, wait=wait)
    finally:
        timer.join()


@pytest.mark.django_db(transaction=True)
def test_a_long_poll_returns_when_the_approver_decides(runtime: Runtime, make_user: Any) -> None:
    approver = make_user("anna", "approver:medication")
    req = runtime.suspend()
    body = long_poll_while(runtime, req["id"], 20, 0.5, lambda: approve(req, approver)).json()
    assert body["state"] == "approved" and body["decidedBy"] == "anna"


@contextmanager
def persistent_connection(max_age: int = 60) -> Iterator[list[str]]:
    """The test thread's connection kept between requests as production keeps it (CONN_MAX_AGE); yields the
    aliases of the connections opened meanwhile."""
    opened: list[str] = []

    def count(sender: Any, connection: Any, **kwargs: Any) -> None:
        opened.append(connection.alias)

    default = connections["default"]
    saved = default.settings_dict["CONN_MAX_AGE"]
    default.close()
    default.settings_dict["CONN_MAX_AGE"] = max_age
    default.ensure_connection()  # its close_at is now counted from max_age
    connection_created.connect(count)
    try:
        yield opened
    finally:
        connection_created.disconnect(count)
        default.settings_dict["CONN_MAX_AGE"] = saved
        default.close()


@requires_postgres  # SQLite's in-memory test database ignores close(): there the old code passed too
@pytest.mark.django_db(transaction=True)
def test_a_long_poll_keeps_its_database_connection_between_reads(runtime: Runtime, settings: Any) -> None:
    """A waiter reads about once an interval; reconnecting for each read cost a new PostgreSQL backend each time."""
    settings.APPROVALS_LONG_POLL_INTERVAL_SECONDS = 0.1
    req = runtime.suspend()
    with persistent_connection() as opened:
        body = runtime.get(req["id"], wait=1).json()
    assert body["state"] == "pending" and opened == []


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_long_poll_whose_connection_the_server_ended_reconnects_and_sees_the_decision(
    runtime: Runtime, make_user: Any, settings: Any
) -> None:
    # Reads at about 0 s and 0.5 s: the backend is ended at 0.25 s, while the waiter sleeps, not mid-read.
    settings.APPROVALS_LONG_POLL_INTERVAL_SECONDS = 0.5
    approver = make_user("anna", "approver:medication")
    req = runtime.suspend()
    with persistent_connection() as opened:
        waiter = connections["default"].connection.info.backend_pid

        def end_then_decide() -> None:
            with connections["default"].cursor() as cursor:  # this thread's own connection
                cursor.execute("SELECT pg_terminate_backend(%s)", [waiter])
                assert cursor.fetchone() == (True,)
            approve(req, approver)

        response = long_poll_while(runtime, req["id"], 10, 0.25, end_then_decide)
    assert response.status_code == 200 and response.json()["state"] == "approved"
    assert opened.count("default") >= 2  # the decider's, and the waiter's new one


def test_cancel_needs_no_body(runtime: Runtime) -> None:
    req = runtime.suspend()
    response = runtime.client.post(f"/api/v1/approvals/{req['id']}/cancel", headers=runtime.headers)
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    bad = runtime.client.post(
        f"/api/v1/approvals/{req['id']}/cancel", data="{", content_type="application/json", headers=runtime.headers
    )
    assert bad.status_code == 422 and 'expected {"reason": "…"} or nothing' in bad.json()["detail"]
