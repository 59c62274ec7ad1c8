"""POST /api/v1/approvals/evaluate as the runtime calls it: allow, suspend, and every refusal."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail
from django.test import Client

from approvals.domain import args_sha256
from approvals.models import ApprovalRequest
from catalog.models import AuditEvent
from tests.conftest import sign_off, signed_import

from .conftest import PATIENT, PRESCRIPTION_ARGS, Runtime, evaluate_body

pytestmark = pytest.mark.django_db


def test_a_read_tool_is_allowed_and_writes_nothing(runtime: Runtime) -> None:
    response = runtime.evaluate(tool="listActiveMedications", dispatchMode="ambient")
    assert response.status_code == 200
    body = response.json()
    assert body["decision"] == "allow" and body["reason"] == "read"
    assert body["tool"] == {
        "system": "condor",
        "id": "listActiveMedications",
        "canonicalKey": "list.active.medications",
        "llmName": "listActiveMedications",
    }
    assert ApprovalRequest.objects.count() == 0


def test_tier_high_suspends_in_operator_chat_with_a_request(runtime: Runtime) -> None:
    response = runtime.evaluate(dispatchMode="operator")
    assert response.status_code == 201
    body = response.json()
    assert body["decision"] == "suspend" and body["reason"] == "tier-high" and body["replayed"] is False
    req = body["request"]
    assert req["state"] == "pending" and req["tierKey"] == "high" and req["policyDomain"] == "medication"
    assert req["argsSha256"] == args_sha256(evaluate_body()["args"])
    assert list(req["args"]) == sorted(req["args"])  # stored canonically
    assert req["url"].endswith(f"/approvals/{req['id']}/")
    row = ApprovalRequest.objects.get(pk=req["id"])
    assert row.requested_by == "dr.house" and row.patient_ref == PATIENT and row.submitted_via == "runtime"
    event = AuditEvent.objects.get(action="approvals.request.suspended")
    assert event.object_id == req["id"] and event.actor == "token:runtime"


def test_tier_low_is_allowed_in_operator_mode_and_suspends_otherwise(runtime: Runtime) -> None:
    allowed = runtime.evaluate(tool="bookAppointment", dispatchMode="operator")
    assert allowed.status_code == 200 and allowed.json()["decision"] == "allow"
    for mode in ("supervised", "ambient"):
        suspended = runtime.evaluate(tool="bookAppointment", dispatchMode=mode)
        assert suspended.status_code == 201 and suspended.json()["request"]["tierKey"] == "low"


def test_a_tier_floor_raises_a_low_declaration_at_the_next_call(runtime: Runtime, make_user: Any) -> None:
    from catalog.services.floors import tier_floor_add

    # createInvoiceDraft declares tier low in the billing domain: operator mode allows it, until a floor says no.
    assert runtime.evaluate(tool="createInvoiceDraft", dispatchMode="operator").status_code == 200
    officer = make_user("olga", "safety-officer")
    tier_floor_add(
        policy_domain="billing", pattern="", system="", min_tier="high", reason="all billing", created_by=officer
    )
    raised = runtime.evaluate(tool="createInvoiceDraft", dispatchMode="operator")
    assert raised.status_code == 201 and raised.json()["reason"] == "tier-high"
    assert raised.json()["request"]["hitlTier"] == "high" and raised.json()["request"]["tierKey"] == "high"


def test_an_ungated_tucan_mutation_is_suspended_flagged_and_routed_by_category(runtime: Runtime) -> None:
    response = runtime.evaluate(tool="create_prescription", dispatchMode="operator", args=PRESCRIPTION_ARGS)
    assert response.status_code == 201
    req = response.json()["request"]
    assert req["flagged"] is True and req["tierKey"] == "ungated" and req["hitlTier"] is None
    assert req["policyDomain"] == "prescriptions" and req["tool"]["id"] == "create-prescription"


def test_any_spelling_resolves_the_tool(runtime: Runtime) -> None:
    for spelling in ("prescribe_medication", "prescribe-medication", "medication.prescribe", "PrescribeMedication"):
        response = runtime.evaluate(tool=spelling)
        assert response.status_code == 201, spelling
        assert response.json()["request"]["tool"]["id"] == "prescribeMedication"


def test_same_idempotency_key_returns_the_same_request(runtime: Runtime) -> None:
    first = runtime.evaluate(idempotencyKey="retry-me")
    second = runtime.evaluate(
        idempotencyKey="retry-me", args={"patientId": PATIENT, "dose": "500 mg", "drug": "amoxicillin"}
    )
    assert first.status_code == 201 and second.status_code == 200
    assert second.json()["replayed"] is True
    assert second.json()["request"]["id"] == first.json()["request"]["id"]
    assert ApprovalRequest.objects.count() == 1


def test_same_idempotency_key_with_other_arguments_is_a_409_that_says_so(runtime: Runtime) -> None:
    runtime.evaluate(idempotencyKey="k1")
    response = runtime.evaluate(idempotencyKey="k1", args={"drug": "amoxicillin", "dose": "5000 mg"})
    assert response.status_code == 409
    body = response.json()
    assert body["reason"] == "idempotency-key-reused"
    assert "idempotencyKey 'k1' was already used for prescribeMedication" in body["detail"]
    assert "different arguments" in body["detail"] and "a new call needs a new idempotency key" in body["detail"]
    assert ApprovalRequest.objects.count() == 1


def test_same_idempotency_key_for_another_tool_is_a_409(runtime: Runtime) -> None:
    runtime.evaluate(idempotencyKey="k2")
    response = runtime.evaluate(idempotencyKey="k2", tool="createInvoiceDraft")
    assert response.status_code == 409 and "different tool" in response.json()["detail"]


@pytest.mark.parametrize(
    ("overrides", "reason", "detail"),
    [
        ({"tool": "prescribeMedicaton"}, "unknown-tool", "'prescribeMedicaton' is not a live tool of the catalog"),
        (
            {"tool": "draftReferralLetter"},
            "not-plan-eligible",
            "condor:draftReferralLetter is not plan-eligible under profile clinical-production",
        ),
        ({"tool": "searchTools", "profile": "demo"}, "not-plan-eligible", "only business-plane tools"),
        ({"profile": "clinical-prod"}, "unknown-profile", "profile 'clinical-prod' is not a catalog profile (known:"),
        (
            {"tool": "book.appointment"},
            "ambiguous-tool",
            "matches 2 live tools (condor:bookAppointment, tucan:book-appointment); send the exact declared id",
        ),
    ],
)
def test_refusals_are_422_with_a_reason_and_what_to_do(
    runtime: Runtime, overrides: dict[str, Any], reason: str, detail: str
) -> None:
    response = runtime.evaluate(**overrides)
    assert response.status_code == 422
    body = response.json()
    assert body["decision"] == "refuse" and body["reason"] == reason
    assert detail in body["detail"]
    assert ApprovalRequest.objects.count() == 0


def test_a_preview_tool_is_eligible_under_a_profile_that_activates_previews(runtime: Runtime) -> None:
    response = runtime.evaluate(tool="draftReferralLetter", profile="demo")
    assert response.status_code == 201


def test_system_chooses_between_tools_of_both_catalogs(runtime: Runtime) -> None:
    response = runtime.evaluate(tool="book.appointment", system="tucan", args={})
    assert response.status_code == 201 and response.json()["request"]["tool"]["id"] == "book-appointment"
    # The exact LLM name is what the model was shown: it names one tool.
    response = runtime.evaluate(tool="book_appointment", args={})
    assert response.status_code == 201 and response.json()["request"]["tool"]["system"] == "tucan"


def test_arguments_that_break_the_input_schema_are_refused_with_their_locations(runtime: Runtime) -> None:
    args = {**PRESCRIPTION_ARGS, "pzn": "123", "colour": "red"}
    del args["packSize"]
    response = runtime.evaluate(tool="create-prescription", args=args)
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "invalid-args"
    assert "args do not match the input schema of tucan:create-prescription" in body["detail"]
    assert "args.pzn: '123' does not match '^[0-9]{8}$'" in body["errors"]
    assert "args: 'packSize' is a required property" in body["errors"]
    assert any("'colour' was unexpected" in e for e in body["errors"])


def test_ttl_override_within_limits_and_refused_outside(runtime: Runtime) -> None:
    ok = runtime.evaluate(ttlSeconds=120).json()["request"]
    row = ApprovalRequest.objects.get(pk=ok["id"])
    assert (row.expires_at - row.created_at).total_seconds() == 120
    default = ApprovalRequest.objects.get(pk=runtime.evaluate().json()["request"]["id"])
    assert (default.expires_at - default.created_at).total_seconds() == 900
    refused = runtime.evaluate(ttlSeconds=5)
    assert refused.status_code == 422 and refused.json()["reason"] == "invalid-ttl"
    assert "ttlSeconds: 5 is outside 30..14400 for tier high" in refused.json()["detail"]


def test_malformed_requests_name_the_field(runtime: Runtime) -> None:
    response = runtime.evaluate(dispatchMode="autonomous")
    assert response.status_code == 422
    assert any("dispatchMode" in e for e in response.json()["errors"])
    response = runtime.evaluate(args=["not", "an", "object"])
    assert response.status_code == 422 and any("args" in e for e in response.json()["errors"])
    body = evaluate_body()
    del body["idempotencyKey"]
    response = runtime.client.post(
        "/api/v1/approvals/evaluate", data=body, content_type="application/json", headers=runtime.headers
    )
    assert response.status_code == 422 and any("idempotencyKey" in e for e in response.json()["errors"])


def test_the_token_needs_the_approvals_scope(runtime: Runtime, make_token: Any) -> None:
    client = Client()
    catalog_only = make_token("ci-export", scopes=("catalog:read",))
    response = client.post(
        "/api/v1/approvals/evaluate",
        data=evaluate_body(),
        content_type="application/json",
        headers={"Authorization": f"Bearer {catalog_only}"},
    )
    assert response.status_code == 403 and "lacks the scope 'approvals'" in response.json()["detail"]
    anonymous = client.post("/api/v1/approvals/evaluate", data=evaluate_body(), content_type="application/json")
    assert anonymous.status_code == 401


def test_suspension_mails_the_domain_approvers_after_commit(
    runtime: Runtime, approver: Any, make_user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    make_user("carl", "approver", "approver:billing", email="carl@example.org")
    make_user("dora", "approver:medication")  # no e-mail address: skipped
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        req = runtime.suspend()
    assert [c.__name__ for c in callbacks].count("notify_soon") == 1  # one announcement, after commit
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["anna@example.org"]
    assert "prescribeMedication" in message.subject and "tier high" in message.subject
    assert f"/approvals/{req['id']}/" in message.body and "requested by dr.house" in message.body


def test_evaluate_runs_a_bounded_number_of_queries(runtime: Runtime, django_assert_max_num_queries: Any) -> None:
    runtime.evaluate()  # warm: the catalog index
    # token, catalog version, savepoint, insert, audit insert (no lock: sealed later), release: whatever the
    # catalog or queue size
    with django_assert_max_num_queries(7):  # + the tier floors' version
        assert runtime.evaluate(patientRef="").status_code == 201
    # For a patient, the possible-duplicate check: the tool's row locked, the earlier requests and allowed calls
    with django_assert_max_num_queries(10):
        assert runtime.evaluate().status_code == 201
    # token, catalog version, the idempotency key lookup
    with django_assert_max_num_queries(3):
        assert runtime.evaluate(tool="listActiveMedications").status_code == 200


def test_a_catalog_import_is_seen_by_the_next_evaluate_once_signed_off(runtime: Runtime, manifests: Any) -> None:
    from catalog.services.imports import catalog_import

    m = manifests
    note = m.mutate_tool("recordClinicalNote", module="note", policyDomain="note", hitlTier="high")
    book = m.mutate_tool("bookAppointment", module="appointment", policyDomain="appointment", hitlTier="low")
    invoice = m.mutate_tool("createInvoiceDraft", module="billing", policyDomain="billing", hitlTier="low")
    signed_import(m.encode(m.condor([note, book, invoice, m.condor_tool("listActiveMedications")], forcedFloors=[])))
    assert runtime.evaluate(tool="createInvoiceDraft").status_code == 201
    lowered = m.condor(
        [{**note, "hitlTier": "low"}, {**book, "hitlTier": "high"}, m.condor_tool("listActiveMedications")],
        forcedFloors=[],
    )
    catalog_import(raw=m.encode(lowered), via="test")
    gone = runtime.evaluate(tool="createInvoiceDraft")
    assert gone.status_code == 422 and gone.json()["reason"] == "unknown-tool"  # a removal takes effect at import
    raised = runtime.evaluate(tool="bookAppointment", dispatchMode="operator")
    assert raised.status_code == 201 and raised.json()["reason"] == "tier-high"  # so does a strengthening
    # A lowered tier waits for sign-off under the clinical profile; a non-clinical profile sees it at once.
    # (each note its own: the same call again would be a possible duplicate, tests/approvals/test_duplicates.py)
    waiting = runtime.evaluate(tool="recordClinicalNote", dispatchMode="operator", args={"note": "first"})
    assert waiting.status_code == 201 and waiting.json()["reason"] == "tier-high"
    demo = runtime.evaluate(tool="recordClinicalNote", dispatchMode="operator", profile="demo", args={"note": "demo"})
    assert demo.status_code == 200 and demo.json()["reason"] == "tier-low-operator"
    sign_off("condor")
    signed = runtime.evaluate(tool="recordClinicalNote", dispatchMode="operator", args={"note": "signed"})
    assert signed.status_code == 200 and signed.json()["reason"] == "tier-low-operator"
