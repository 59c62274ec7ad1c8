"""Exactly once, on real PostgreSQL with real connections: 20 threads at the same moment, each time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from approvals.models import ApprovalRequest
from approvals.services import ApprovalRefused, approval_consume, approval_decide, approval_evaluate
from catalog.core.audit import audit_verify
from catalog.models import AuditEvent
from tests.concurrency import at_once as at_once_n
from tests.conftest import requires_postgres

from .conftest import evaluate_body, load_catalog

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]
N = 20


def at_once(work: Callable[[int], Any], n: int = N) -> list[Any]:
    return at_once_n(work, n)


@pytest.fixture
def suspended(manifests: Any) -> ApprovalRequest:
    assert connection.vendor == "postgresql"
    load_catalog(manifests)
    body = evaluate_body()
    result = approval_evaluate(
        tool_name=body["tool"],
        profile=body["profile"],
        dispatch_mode=body["dispatchMode"],
        run_id=body["runId"],
        requested_by=body["requestedBy"],
        patient_ref=body["patientRef"],
        args=body["args"],
        idempotency_key="race",
        via="runtime",
    )
    assert result.request is not None
    return result.request


def test_twenty_approvers_deciding_at_once_record_exactly_one_decision(
    suspended: ApprovalRequest, make_user: Any
) -> None:
    approvers = [make_user(f"approver{i}", "approver:medication") for i in range(N)]

    def decide(i: int) -> ApprovalRequest:
        decision = "approve" if i % 2 else "reject"
        return approval_decide(request_id=suspended.pk, approver=approvers[i], decision=decision, reason=f"by {i}")

    results = at_once(decide)
    winners = [r for r in results if isinstance(r, ApprovalRequest)]
    losers = [r for r in results if isinstance(r, ApprovalRefused)]
    assert len(winners) == 1 and len(losers) == N - 1, results
    winner = winners[0]
    verb = "approved" if winner.state == "approved" else "rejected"
    assert all(r.code == "already-decided" for r in losers)
    assert all(r.message.startswith(f"already {verb} by {winner.decided_by.username} at ") for r in losers)
    row = ApprovalRequest.objects.get(pk=suspended.pk)
    assert row.state == winner.state and row.decided_by_id == winner.decided_by_id
    decisions = AuditEvent.objects.filter(action__in=["approvals.request.approved", "approvals.request.rejected"])
    assert decisions.count() == 1
    assert audit_verify().ok


def test_twenty_submits_with_one_idempotency_key_make_one_row(manifests: Any) -> None:
    load_catalog(manifests)
    body = evaluate_body()

    def submit(i: int) -> Any:
        return approval_evaluate(
            tool_name=body["tool"],
            profile=body["profile"],
            dispatch_mode=body["dispatchMode"],
            run_id=body["runId"],
            requested_by=body["requestedBy"],
            patient_ref=body["patientRef"],
            args=dict(reversed(list(body["args"].items()))) if i % 2 else body["args"],  # same args, any key order
            idempotency_key="one-key",
            via=f"runtime-{i}",
        )

    results = at_once(submit)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert ApprovalRequest.objects.count() == 1
    only = ApprovalRequest.objects.get()
    assert {str(r.request.pk) for r in results} == {str(only.pk)}
    assert sum(r.created for r in results) == 1
    assert AuditEvent.objects.filter(action="approvals.request.suspended").count() == 1
    assert audit_verify().ok


def test_two_different_calls_racing_with_one_idempotency_key_one_wins_and_the_other_gets_a_409(
    manifests: Any,
) -> None:
    load_catalog(manifests)
    body = evaluate_body()
    patients = ("3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d", "9d0c6a1e-2b3f-4c5d-8e7f-a1b2c3d4e5f6")

    def submit(i: int) -> Any:
        return approval_evaluate(
            tool_name=body["tool"],
            profile=body["profile"],
            dispatch_mode=body["dispatchMode"],
            run_id=body["runId"],
            requested_by=body["requestedBy"],
            patient_ref=patients[i % 2],  # half the submits are another call: another patient
            args=body["args"],
            idempotency_key="shared-key",
            via=f"runtime-{i}",
        )

    results = at_once(submit)
    only = ApprovalRequest.objects.get()
    winners = [i for i, r in enumerate(results) if not isinstance(r, Exception)]
    losers = [i for i, r in enumerate(results) if isinstance(r, Exception)]
    # Every submit of the winning call gets its request (one creates it); every submit of the other call a 409.
    assert {patients[i % 2] for i in winners} == {only.patient_ref} and len(winners) == N // 2, results
    assert {str(results[i].request.pk) for i in winners} == {str(only.pk)}
    assert sum(results[i].created for i in winners) == 1
    assert {patients[i % 2] for i in losers} == set(patients) - {only.patient_ref} and len(losers) == N // 2
    refusals = [results[i] for i in losers]
    assert all(isinstance(r, ApprovalRefused) for r in refusals), refusals
    assert {(r.code, r.status, tuple(r.errors), r.request) for r in refusals} == {
        (
            "idempotency-key-reused",
            409,
            ("patientRef: differs from the call this idempotencyKey was first used for",),
            None,
        )
    }
    assert AuditEvent.objects.filter(action="approvals.request.suspended").count() == 1
    assert audit_verify().ok


def test_twenty_consumes_at_once_succeed_exactly_once(suspended: ApprovalRequest, make_user: Any) -> None:
    approval_decide(request_id=suspended.pk, approver=make_user("anna", "approver:medication"), decision="approve")

    def consume(i: int) -> ApprovalRequest:
        return approval_consume(request_id=suspended.pk, args_sha256=suspended.proposed_sha256, via=f"runtime-{i}")

    results = at_once(consume)
    successes = [r for r in results if isinstance(r, ApprovalRequest)]
    refusals = [r for r in results if isinstance(r, ApprovalRefused)]
    assert len(successes) == 1 and len(refusals) == N - 1, results
    assert {r.code for r in refusals} == {"already-consumed"}
    assert ApprovalRequest.objects.get(pk=suspended.pk).state == "consumed"
    assert AuditEvent.objects.filter(action="approvals.request.consumed").count() == 1


def test_an_approval_racing_the_expiry_task_ends_in_one_state(suspended: ApprovalRequest, make_user: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from approvals.services import approvals_expire_overdue

    anna = make_user("anna", "approver:medication")
    # Due in a moment: the approver's `now` is before expiry, the task's after it.
    due = timezone.now() + timedelta(seconds=30)
    ApprovalRequest.objects.filter(pk=suspended.pk).update(expires_at=due)

    def act(i: int) -> Any:
        if i == 0:
            return approvals_expire_overdue(now=due + timedelta(seconds=1))
        return approval_decide(
            request_id=suspended.pk, approver=anna, decision="approve", now=due - timedelta(seconds=1)
        )

    results = at_once(act, n=2)
    row = ApprovalRequest.objects.get(pk=suspended.pk)
    assert row.state in ("approved", "expired")
    if row.state == "approved":
        assert results[0] == 0
    else:
        assert isinstance(results[1], ApprovalRefused) and results[1].code == "expired"
    transitions = AuditEvent.objects.filter(action__in=["approvals.request.approved", "approvals.request.expired"])
    assert transitions.count() == 1
