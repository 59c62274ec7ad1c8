"""Possible duplicates (the seed's duplicate prescription): the same tool, patient and canonical arguments as a call of
the last APPROVALS_DUPLICATE_WINDOW_MINUTES under another idempotency key. A suspending call names the request it
repeats; a tier-low operator call that would run waits for an approver instead."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from approvals.domain import (
    Decision,
    Earlier,
    PolicyOutcome,
    duplicate_window_start,
    newest_earlier,
    with_duplicate,
)
from approvals.models import AllowedCall, ApprovalRequest
from approvals.services import approval_decide, approvals_expire_overdue
from catalog.models import AuditEvent

from .conftest import PATIENT, Runtime

pytestmark = pytest.mark.django_db
OTHER_PATIENT = "9d0c6a1e-2b3f-4c5d-8e7f-a1b2c3d4e5f6"
INVOICE = {"tool": "createInvoiceDraft", "dispatchMode": "operator", "args": {"amount": 120, "code": "GOÄ 1"}}


@pytest.fixture
def billing_approver(make_user: Any) -> Any:
    return make_user("carl", "approver", "approver:billing", email="carl@example.org")


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- a suspending call names what it repeats --------------------------------------------------------------


def test_a_suspending_call_that_repeats_a_pending_request_names_it(runtime: Runtime) -> None:
    first = runtime.suspend(idempotencyKey="run-1/a")
    response = runtime.evaluate(idempotencyKey="run-2/a")
    assert response.status_code == 201
    body = response.json()
    assert body["reason"] == "tier-high"  # it waits anyway; the approver is told what it repeats
    assert body["detail"].endswith(f"; possible duplicate of {first['id'][:8]} (same tool, patient and arguments)")
    assert body["request"]["duplicateOf"] == first["id"]
    second = ApprovalRequest.objects.get(pk=body["request"]["id"])
    assert str(second.duplicate_of_id) == first["id"] and second.duplicate_allowed_at is None
    event = AuditEvent.objects.filter(action="approvals.request.suspended", object_id=second.pk).get()
    assert event.after["duplicate_of"] == first["id"]
    assert ApprovalRequest.objects.get(pk=first["id"]).duplicate_of_id is None


def test_it_names_the_newest_earlier_request(runtime: Runtime) -> None:
    runtime.suspend()
    middle = runtime.suspend()
    assert middle["duplicateOf"] is not None
    assert runtime.suspend()["duplicateOf"] == middle["id"]


@pytest.mark.parametrize(
    "change",
    [
        {"patientRef": OTHER_PATIENT},
        {"args": {"drug": "amoxicillin", "dose": "250 mg", "patientId": PATIENT}},
        {"tool": "bookAppointment"},
    ],
)
def test_another_patient_other_arguments_or_another_tool_is_no_duplicate(
    runtime: Runtime, change: dict[str, Any]
) -> None:
    runtime.suspend()
    assert runtime.suspend(**change)["duplicateOf"] is None


def test_another_spelling_of_the_same_tool_is_the_same_call(runtime: Runtime) -> None:
    first = runtime.suspend()
    assert runtime.suspend(tool="medication.prescribe")["duplicateOf"] == first["id"]


def test_without_a_patient_nothing_is_compared(runtime: Runtime) -> None:
    runtime.suspend(patientRef="")
    assert runtime.suspend(patientRef="")["duplicateOf"] is None
    for _ in range(2):
        assert runtime.evaluate(**INVOICE, patientRef="").status_code == 200
    assert not AllowedCall.objects.exists()


def test_the_same_arguments_in_another_key_order_are_the_same_call(runtime: Runtime) -> None:
    first = runtime.suspend(args={"drug": "amoxicillin", "dose": "500 mg"})
    assert runtime.suspend(args={"dose": "500 mg", "drug": "amoxicillin"})["duplicateOf"] == first["id"]


@pytest.mark.parametrize("state", ["approved", "consumed", "rejected"])
def test_a_decided_request_is_compared(runtime: Runtime, approver: Any, state: str) -> None:
    first = runtime.suspend()
    decision = "reject" if state == "rejected" else "approve"
    approval_decide(request_id=first["id"], approver=approver, decision=decision, reason="checked")
    if state == "consumed":
        assert runtime.consume(first["id"], first["argsSha256"]).status_code == 200
    assert runtime.suspend()["duplicateOf"] == first["id"]


@pytest.mark.parametrize("state", ["expired", "cancelled", "past-due"])
def test_an_expired_or_cancelled_request_is_not(runtime: Runtime, state: str) -> None:
    first = runtime.suspend()
    past = timezone.now() - timedelta(seconds=1)
    if state == "cancelled":
        runtime.cancel(first["id"])
    elif state == "expired":
        ApprovalRequest.objects.filter(pk=first["id"]).update(state="expired", expired_at=past, expires_at=past)
    else:  # still pending in the table, but no longer decidable: the beat has not marked it yet
        ApprovalRequest.objects.filter(pk=first["id"]).update(expires_at=past)
    assert runtime.suspend()["duplicateOf"] is None


def test_a_request_older_than_the_window_is_not_compared(runtime: Runtime, settings: Any) -> None:
    first = runtime.suspend()
    old = timezone.now() - timedelta(minutes=settings.APPROVALS_DUPLICATE_WINDOW_MINUTES, seconds=1)
    ApprovalRequest.objects.filter(pk=first["id"]).update(created_at=old)
    assert runtime.suspend()["duplicateOf"] is None


def test_a_window_of_zero_compares_nothing(runtime: Runtime, settings: Any) -> None:
    settings.APPROVALS_DUPLICATE_WINDOW_MINUTES = 0
    runtime.suspend()
    assert runtime.suspend()["duplicateOf"] is None
    assert [runtime.evaluate(**INVOICE).status_code for _ in range(2)] == [200, 200]
    assert not AllowedCall.objects.exists()


# --- a tier-low operator call that repeats one waits -----------------------------------------------------


def test_a_tier_low_operator_call_repeating_a_request_suspends_as_a_possible_duplicate(runtime: Runtime) -> None:
    first = runtime.suspend(**{**INVOICE, "dispatchMode": "supervised"})  # no person in the chat: it waited
    response = runtime.evaluate(**INVOICE)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["decision"], body["reason"]) == ("suspend", "possible-duplicate")
    assert f"possible duplicate of {first['id'][:8]}" in body["detail"]
    req = body["request"]
    assert (req["tierKey"], req["hitlTier"], req["flagged"], req["duplicateOf"]) == (
        "low",
        "low",
        False,
        first["id"],
    )


def test_two_identical_tier_low_operator_calls_the_second_waits(runtime: Runtime) -> None:
    first = runtime.evaluate(**INVOICE, idempotencyKey="run-1/invoice")
    assert first.status_code == 200 and first.json()["reason"] == "tier-low-operator"
    remembered = AllowedCall.objects.get()
    assert (remembered.patient_ref, remembered.idempotency_key) == (PATIENT, "run-1/invoice")
    second = runtime.evaluate(**INVOICE, idempotencyKey="run-2/invoice")
    assert second.status_code == 201, second.content
    body = second.json()
    assert body["reason"] == "possible-duplicate"
    assert "idempotencyKey 'run-1/invoice'" in body["detail"]
    assert f"allowed at {remembered.created_at.isoformat(timespec='seconds')}" in body["detail"]
    assert body["request"]["duplicateOf"] is None  # the first call left no request to link
    row = ApprovalRequest.objects.get(pk=body["request"]["id"])
    assert row.duplicate_allowed_at == remembered.created_at and row.policy_reason == "possible-duplicate"
    event = AuditEvent.objects.get(action="approvals.request.suspended")
    assert event.after["duplicate_of"] is None and event.after["duplicate_of_allowed_call"] == "run-1/invoice"


def test_a_retry_of_an_allowed_call_is_allowed_again_and_remembered_once(runtime: Runtime) -> None:
    for _ in range(3):
        response = runtime.evaluate(**INVOICE, idempotencyKey="run-1/invoice")
        assert response.status_code == 200 and response.json()["reason"] == "tier-low-operator"
    assert AllowedCall.objects.count() == 1 and not ApprovalRequest.objects.exists()


def test_a_retry_of_the_waiting_duplicate_gets_its_request_and_the_first_call_still_runs(runtime: Runtime) -> None:
    runtime.evaluate(**INVOICE, idempotencyKey="k1")
    waiting = runtime.evaluate(**INVOICE, idempotencyKey="k2").json()["request"]
    again = runtime.evaluate(**INVOICE, idempotencyKey="k2")
    assert again.status_code == 200 and again.json()["replayed"] and again.json()["request"]["id"] == waiting["id"]
    # k1 is the call that was allowed: its retry is that call again, not a duplicate of the request k2 made.
    assert runtime.evaluate(**INVOICE, idempotencyKey="k1").status_code == 200
    assert ApprovalRequest.objects.count() == 1


def test_an_allowed_call_older_than_the_window_is_forgotten_by_the_beat(runtime: Runtime, settings: Any) -> None:
    runtime.evaluate(**INVOICE, idempotencyKey="k1")
    runtime.evaluate(**{**INVOICE, "args": {"amount": 1}}, idempotencyKey="k2")
    old = timezone.now() - timedelta(minutes=settings.APPROVALS_DUPLICATE_WINDOW_MINUTES, seconds=1)
    AllowedCall.objects.filter(idempotency_key="k1").update(created_at=old)
    assert runtime.evaluate(**INVOICE, idempotencyKey="k3").status_code == 200  # older than the window: not compared
    approvals_expire_overdue()
    assert sorted(AllowedCall.objects.values_list("idempotency_key", flat=True)) == ["k2", "k3"]


def test_a_possible_duplicate_is_refused_a_bad_ttl_and_leaves_nothing(runtime: Runtime) -> None:
    runtime.evaluate(**INVOICE, idempotencyKey="k1")
    response = runtime.evaluate(**INVOICE, idempotencyKey="k2", ttlSeconds=5)
    assert response.status_code == 422 and response.json()["reason"] == "invalid-ttl"
    assert not ApprovalRequest.objects.exists() and AllowedCall.objects.count() == 1


def test_an_allowed_mutation_for_a_patient_reads_a_bounded_number_of_queries(
    runtime: Runtime, django_assert_max_num_queries: Any
) -> None:
    runtime.evaluate(tool="listActiveMedications")  # warm: the catalog index
    # token, catalog version, tier floors' version, the key's request, savepoint, the tool's lock, earlier
    # requests, earlier allowed calls, the insert, release
    with django_assert_max_num_queries(10):
        assert runtime.evaluate(**INVOICE).status_code == 200
    with django_assert_max_num_queries(4):  # a read compares nothing
        assert runtime.evaluate(tool="listActiveMedications").status_code == 200


# --- what the approver sees -----------------------------------------------------------------------------


def test_the_request_page_links_the_request_it_may_repeat(runtime: Runtime, approver: Any) -> None:
    first = runtime.suspend()
    second = runtime.suspend()
    body = signed_in(approver).get(f"/approvals/{second['id']}/").content.decode()
    assert f'Possible duplicate of <a href="/approvals/{first["id"]}/">#{first["id"][:8]}</a>' in body
    plain = signed_in(approver).get(f"/approvals/{first['id']}/").content.decode()
    assert "Possible duplicate" not in plain


def test_the_request_page_says_when_the_repeated_call_was_allowed(runtime: Runtime, billing_approver: Any) -> None:
    runtime.evaluate(**INVOICE, idempotencyKey="k1")
    allowed_at = AllowedCall.objects.get().created_at
    waiting = runtime.evaluate(**INVOICE, idempotencyKey="k2").json()["request"]
    body = signed_in(billing_approver).get(f"/approvals/{waiting['id']}/").content.decode()
    at = timezone.localtime(allowed_at).strftime("%H:%M")
    assert f"same tool, patient and arguments as a call allowed at {at}" in body
    assert "possible-duplicate" in body  # why it waits


def test_the_queue_badges_a_possible_duplicate_and_offers_no_bulk_approval(
    runtime: Runtime, billing_approver: Any
) -> None:
    plain = runtime.suspend(**{**INVOICE, "dispatchMode": "supervised", "args": {"amount": 1}})
    runtime.evaluate(**INVOICE, idempotencyKey="k1")
    waiting = runtime.evaluate(**INVOICE, idempotencyKey="k2").json()["request"]
    client = signed_in(billing_approver)
    body = client.get("/approvals/").content.decode()
    assert body.count('class="badge possible-duplicate"') == 1
    assert f'id="bulk-{plain["id"]}"' in body and f'id="bulk-{waiting["id"]}"' not in body
    response = client.post("/approvals/bulk-approve", {"ids": [plain["id"], waiting["id"]]}, follow=True)
    assert (
        "may repeat an earlier call (same tool, patient and arguments): no bulk approval" in response.content.decode()
    )
    states = dict(ApprovalRequest.objects.values_list("pk", "state"))
    assert {str(k): v for k, v in states.items()} == {plain["id"]: "approved", waiting["id"]: "pending"}


# --- the rule, as plain values ---------------------------------------------------------------------------

NOW = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
HIGH = PolicyOutcome(Decision.SUSPEND, "tier-high", "x is tier high", tier_key="high")
LOW_OPERATOR = PolicyOutcome(Decision.ALLOW, "tier-low-operator", "x is tier low")


def test_the_window_starts_n_minutes_back_and_needs_a_patient() -> None:
    assert duplicate_window_start(NOW, minutes=10, patient_ref="p") == NOW - timedelta(minutes=10)
    assert duplicate_window_start(NOW, minutes=10, patient_ref="") is None
    assert duplicate_window_start(NOW, minutes=0, patient_ref="p") is None


def test_the_newest_call_under_another_key_is_chosen_a_request_first() -> None:
    old = Earlier("a", NOW - timedelta(minutes=5), "11111111-aaaa")
    new = Earlier("b", NOW - timedelta(minutes=1), "22222222-bbbb")
    mine = Earlier("me", NOW, "33333333-cccc")
    allowed = Earlier("c", NOW)
    assert newest_earlier([mine, old, new], [allowed], idempotency_key="me") == (new, False)
    assert newest_earlier([mine], [allowed], idempotency_key="me") == (allowed, False)
    assert newest_earlier([], [Earlier("me", NOW)], idempotency_key="me") == (None, True)
    assert newest_earlier([], [], idempotency_key="me") == (None, False)


def test_what_a_repeat_does_to_the_gates_outcome() -> None:
    request = Earlier("a", NOW, "11111111-aaaa-4aaa-8aaa-aaaaaaaaaaaa")
    allowed = Earlier("run-1/x", NOW)
    suspended = with_duplicate(LOW_OPERATOR, request, tool="condor:x")
    assert (suspended.decision, suspended.reason, suspended.tier_key) == (Decision.SUSPEND, "possible-duplicate", "low")
    assert "possible duplicate of 11111111" in suspended.message
    assert "idempotencyKey 'run-1/x'" in with_duplicate(LOW_OPERATOR, allowed).message
    noted = with_duplicate(HIGH, request)
    assert (noted.reason, noted.tier_key) == ("tier-high", "high") and noted.message.startswith("x is tier high; ")
    read = PolicyOutcome(Decision.ALLOW, "read", "x only reads")
    assert with_duplicate(read, request) is read
    assert with_duplicate(LOW_OPERATOR, None) is LOW_OPERATOR
