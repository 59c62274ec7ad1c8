"""Possible duplicates at the same moment, on real PostgreSQL with real connections: identical calls released together
through the API are compared one after the other (the tool's row is locked while a call is compared and written),
so exactly one runs and every other one waits for an approver."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client

from approvals.models import AllowedCall, ApprovalRequest
from catalog.core.audit import audit_verify
from tests.concurrency import at_once
from tests.conftest import requires_postgres

from .conftest import Runtime, evaluate_body, load_catalog

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]
INVOICE = {"tool": "createInvoiceDraft", "dispatchMode": "operator", "args": {"amount": 120}}


@pytest.fixture
def clients(manifests: Any, make_token: Any) -> list[Runtime]:
    assert connection.vendor == "postgresql"
    load_catalog(manifests)
    token = make_token("runtime", scopes=("approvals",))
    return [Runtime(Client(), token) for _ in range(10)]


def _evaluate(client: Runtime, **body: Any) -> tuple[int, dict[str, Any]]:
    response = client.client.post(
        "/api/v1/approvals/evaluate",
        data=evaluate_body(**body),
        content_type="application/json",
        headers=client.headers,
    )
    return response.status_code, response.json()


@pytest.mark.parametrize("n", [2, 10])
def test_identical_tier_low_operator_calls_at_once_one_runs_the_others_wait(clients: list[Runtime], n: int) -> None:
    results = at_once(lambda i: _evaluate(clients[i], **INVOICE, idempotencyKey=f"run-{i}/invoice"), n)
    assert not [r for r in results if isinstance(r, Exception)], results
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] + [201] * (n - 1), results
    allowed = next(body for status, body in results if status == 200)
    assert allowed["reason"] == "tier-low-operator"
    waiting = [body for status, body in results if status == 201]
    assert {b["reason"] for b in waiting} == {"possible-duplicate"}
    assert AllowedCall.objects.count() == 1 and ApprovalRequest.objects.count() == n - 1
    # Each waiting call repeats the one that ran (no request of its own) or a waiting one before it.
    first_key = AllowedCall.objects.get().idempotency_key
    for row in ApprovalRequest.objects.all():
        assert row.duplicate_of_id is not None or row.duplicate_allowed_at is not None
    assert ApprovalRequest.objects.filter(duplicate_of__isnull=True).count() == 1
    assert first_key in next(b["detail"] for b in waiting if b["request"]["duplicateOf"] is None)
    assert audit_verify().ok


def test_identical_suspending_calls_at_once_each_names_an_earlier_one(clients: list[Runtime]) -> None:
    results = at_once(lambda i: _evaluate(clients[i], idempotencyKey=f"run-{i}/rx"), 10)
    assert [status for status, _ in results] == [201] * 10, results
    rows = list(ApprovalRequest.objects.order_by("created_at"))
    # Compared one after the other: exactly one saw nothing before it, every other one names an earlier request.
    assert [r.duplicate_of_id is None for r in rows].count(True) == 1
    ids = {r.pk for r in rows}
    assert all(r.duplicate_of_id in ids for r in rows if r.duplicate_of_id is not None)
