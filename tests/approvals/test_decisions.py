"""Deciding: who may, exactly once, four-eyes, edits against the schema, expiry and escalation."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from approvals.domain import args_sha256
from approvals.models import ApprovalRequest
from approvals.services import (
    ApprovalRefused,
    approval_consume,
    approval_decide,
    approvals_escalate_overdue,
    approvals_expire_overdue,
    approvals_notify_new,
)
from catalog.core.audit import audit_verify
from catalog.models import AuditEvent

from .conftest import PRESCRIPTION_ARGS, Runtime

pytestmark = pytest.mark.django_db


def refused(**kwargs: Any) -> ApprovalRefused:
    with pytest.raises(ApprovalRefused) as exc:
        approval_decide(**kwargs)
    return exc.value


def test_approve_records_the_approver_and_writes_an_audit_event(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    row = approval_decide(request_id=req["id"], approver=approver, decision="approve", reason="checked")
    assert row.state == "approved" and row.decided_by == approver and row.decided_at is not None
    assert row.approved_sha256 == req["argsSha256"] and row.consumable_until > row.decided_at
    event = AuditEvent.objects.get(action="approvals.request.approved")
    assert event.actor == "user:anna" and event.actor_user == approver and event.object_id == req["id"]
    assert event.before["state"] == "pending" and event.after["decided_by"] == "anna"
    assert audit_verify().ok


def test_reject_needs_a_reason(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    exc = refused(request_id=req["id"], approver=approver, decision="reject", reason="  ")
    assert exc.code == "reason-required" and "say why you reject this call" in exc.message
    row = approval_decide(request_id=req["id"], approver=approver, decision="reject", reason="wrong patient")
    assert row.state == "rejected" and row.decision_reason == "wrong patient"


def test_the_second_approver_sees_already_approved_by_whom_and_when(
    runtime: Runtime, approver: Any, second_approver: Any
) -> None:
    req = runtime.suspend()
    first = approval_decide(request_id=req["id"], approver=approver, decision="approve")
    exc = refused(request_id=req["id"], approver=second_approver, decision="reject", reason="no")
    when = timezone.localtime(first.decided_at).strftime("%Y-%m-%d %H:%M:%S")
    assert exc.code == "already-decided" and exc.message == f"already approved by anna at {when}"
    assert exc.status == 409 and exc.request is not None and exc.request.state == "approved"
    assert AuditEvent.objects.filter(action__startswith="approvals.request.").count() == 2  # suspended, approved


def test_an_approver_of_another_domain_or_of_none_may_not_decide(runtime: Runtime, make_user: Any) -> None:
    req = runtime.suspend()
    for user in (make_user("bill", "approver", "approver:billing"), make_user("plain", "approver")):
        exc = refused(request_id=req["id"], approver=user, decision="approve")
        assert exc.forbidden and "needs the group approver:medication" in exc.message
    assert ApprovalRequest.objects.get(pk=req["id"]).state == "pending"


@pytest.mark.parametrize("requested_by", ["anna", "ANNA", "user:anna", "anna@example.org"])
def test_four_eyes_the_requester_cannot_decide_their_own_request(
    runtime: Runtime, approver: Any, requested_by: str
) -> None:
    req = runtime.suspend(requestedBy=requested_by)
    exc = refused(request_id=req["id"], approver=approver, decision="approve")
    assert exc.code == "own-request" and "another approver must decide it (four-eyes)" in exc.message


def test_an_expired_request_cannot_be_approved(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    ApprovalRequest.objects.filter(pk=req["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    exc = refused(request_id=req["id"], approver=approver, decision="approve")
    assert exc.code == "expired" and "without a decision" in exc.message
    assert ApprovalRequest.objects.get(pk=req["id"]).decided_by is None


def test_approve_with_changes_checks_the_schema_and_keeps_both_argument_sets(runtime: Runtime, make_user: Any) -> None:
    pia = make_user("pia", "approver:prescriptions")
    req = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    bad = refused(
        request_id=req["id"], approver=pia, decision="approve", approved_args={**PRESCRIPTION_ARGS, "packSize": "N9"}
    )
    assert bad.code == "invalid-args" and bad.errors == ["args.packSize: 'N9' is not one of ['N1', 'N2', 'N3']"]
    edited = {**PRESCRIPTION_ARGS, "dosageInstructions": "1-0-0"}
    row = approval_decide(request_id=req["id"], approver=pia, decision="approve", approved_args=edited)
    assert row.args_edited and row.proposed_args == PRESCRIPTION_ARGS and row.approved_args == edited
    assert row.approved_sha256 == args_sha256(edited) and row.proposed_sha256 == args_sha256(PRESCRIPTION_ARGS)
    after = AuditEvent.objects.get(action="approvals.request.approved").after
    assert after["args_edited"] is True and after["approved_args"] == edited


def _columns(row: ApprovalRequest) -> dict[str, Any]:
    return {f.attname: getattr(row, f.attname) for f in ApprovalRequest._meta.concrete_fields}


def test_a_decided_or_consumed_request_is_returned_as_stored(runtime: Runtime, make_user: Any) -> None:
    """The services return the row they wrote without reading it back: it must be the stored row exactly."""
    pia = make_user("pia", "approver:prescriptions")
    edited = {**PRESCRIPTION_ARGS, "dosageInstructions": "0-0-1"}
    approved = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    rejected = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    acts = [
        lambda: approval_decide(request_id=approved["id"], approver=pia, decision="approve", approved_args=edited),
        lambda: approval_decide(request_id=rejected["id"], approver=pia, decision="reject", reason="wrong pack"),
        lambda: approval_consume(request_id=approved["id"], args_sha256=args_sha256(edited), via="runtime"),
    ]
    states = []
    for act in acts:
        row = act()
        assert _columns(row) == _columns(ApprovalRequest.objects.get(pk=row.pk))
        assert row.decided_by == pia
        states.append(row.state)
    assert states == ["approved", "rejected", "consumed"]


def test_unchanged_arguments_are_a_plain_approval(runtime: Runtime, make_user: Any) -> None:
    pia = make_user("pia", "approver:prescriptions")
    req = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    row = approval_decide(request_id=req["id"], approver=pia, decision="approve", approved_args=dict(PRESCRIPTION_ARGS))
    assert not row.args_edited and row.approved_sha256 == row.proposed_sha256


def test_a_tool_without_an_input_schema_cannot_have_its_arguments_edited(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    exc = refused(request_id=req["id"], approver=approver, decision="approve", approved_args={"drug": "other"})
    assert exc.code == "no-schema" and "approve them as proposed or reject" in exc.message


def test_no_bulk_approval_for_tier_high(runtime: Runtime, approver: Any, make_user: Any) -> None:
    high = runtime.suspend()
    exc = refused(request_id=high["id"], approver=approver, decision="approve", bulk=True)
    assert exc.code == "no-bulk-for-tier" and "tier high: no bulk approval" in exc.message
    biller = make_user("bill", "approver:billing")
    low = runtime.suspend(tool="createInvoiceDraft")
    assert approval_decide(request_id=low["id"], approver=biller, decision="approve", bulk=True).state == "approved"


def test_the_beat_task_marks_overdue_requests_expired_with_audit_events(runtime: Runtime) -> None:
    overdue = [runtime.suspend()["id"] for _ in range(3)]
    fresh = runtime.suspend()["id"]
    ApprovalRequest.objects.filter(pk__in=overdue).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert approvals_expire_overdue(batch=2) == 3
    assert approvals_expire_overdue() == 0  # twice is harmless
    states = dict(ApprovalRequest.objects.values_list("pk", "state"))
    assert {str(k): v for k, v in states.items()} == {**dict.fromkeys(overdue, "expired"), fresh: "pending"}
    assert AuditEvent.objects.filter(action="approvals.request.expired", actor="system:approvals-expiry").count() == 3
    assert audit_verify().ok


def test_a_request_pending_too_long_escalates_once_and_the_second_group_may_decide(
    runtime: Runtime, make_user: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    lead = make_user("lena", "approval-escalation", email="lead@example.org")
    req = runtime.suspend()
    assert refused(request_id=req["id"], approver=lead, decision="approve").forbidden
    later = timezone.now() + timedelta(seconds=settings.APPROVALS_ESCALATE_AFTER_SECONDS + 1)
    ApprovalRequest.objects.filter(pk=req["id"]).update(expires_at=later + timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        assert approvals_escalate_overdue(now=later) == 1
    assert approvals_escalate_overdue(now=later) == 0
    row = ApprovalRequest.objects.get(pk=req["id"])
    assert row.escalated_to == "approval-escalation" and row.escalated_at == later
    assert [m.to for m in mail.outbox] == [["lead@example.org"]] and "ESCALATED" in mail.outbox[0].subject
    del lead._condor_groups  # a new request of the same user
    assert approval_decide(request_id=req["id"], approver=lead, decision="approve").decided_by == lead


class Hook(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers["Content-Length"])
        Hook.received.append({"type": self.headers["Content-Type"], "body": json.loads(self.rfile.read(length))})
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


def test_suspension_posts_a_slack_compatible_webhook_with_a_link(
    runtime: Runtime, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    server = HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Hook.received = []
    settings.APPROVALS_WEBHOOK_URL = f"http://127.0.0.1:{server.server_port}/hooks/approvals"
    settings.APPROVALS_BASE_URL = "https://condor.example.org"
    try:
        with django_capture_on_commit_callbacks(execute=True):
            req = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    finally:
        server.shutdown()
        server.server_close()
    assert len(Hook.received) == 1
    hook = Hook.received[0]
    assert hook["type"] == "application/json" and set(hook["body"]) == {"text"}
    text = hook["body"]["text"]
    assert text.startswith("Approval needed in domain prescriptions (1 new):\n• create-prescription (tier ungated")
    assert "UNGATED MUTATION" in text and f"https://condor.example.org/approvals/{req['id']}/" in text


def test_a_dead_webhook_does_not_fail_the_suspension(
    runtime: Runtime, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    server = HTTPServer(("127.0.0.1", 0), Hook)
    port = server.server_port
    server.server_close()  # nothing listens there any more
    settings.APPROVALS_WEBHOOK_URL = f"http://127.0.0.1:{port}/"
    with django_capture_on_commit_callbacks(execute=True):
        response = runtime.evaluate()
    assert response.status_code == 201


def test_new_requests_are_announced_once_in_one_mail_per_domain(
    runtime: Runtime, approver: Any, make_user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    make_user("carl", "approver:billing", email="carl@example.org")
    first = [runtime.suspend()["id"] for _ in range(3)]  # callbacks not run: as if the beat had not come yet
    runtime.suspend(tool="createInvoiceDraft")
    assert approvals_notify_new() == 4
    assert approvals_notify_new() == 0  # each request is announced once
    mails = {tuple(m.to): m for m in mail.outbox}
    assert set(mails) == {("anna@example.org",), ("carl@example.org",)}
    medication = mails[("anna@example.org",)]
    assert medication.subject == "[Condor] 3 approval requests need you: medication (tiers high)"
    assert all(f"/approvals/{pk}/" in medication.body for pk in first)
    assert mails[("carl@example.org",)].subject == "[Condor] approval needed: createInvoiceDraft (tier low)"
    assert ApprovalRequest.objects.filter(notified_at__isnull=True).count() == 0
