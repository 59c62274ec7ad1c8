"""A replay is bound to the whole call: the same idempotency key with anything else changed is a 409 that says
what differs, and never hands over the first request (its patient, its requester)."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.domain import REPLAY_FIELDS, replay_conflict, replay_differences
from approvals.models import ApprovalRequest

from .conftest import PATIENT, Runtime

pytestmark = pytest.mark.django_db
OTHER_PATIENT = "9d0c6a1e-2b3f-4c5d-8e7f-a1b2c3d4e5f6"


def test_the_same_call_again_is_still_a_replay(runtime: Runtime) -> None:
    first = runtime.evaluate(idempotencyKey="run-1/call-1")
    again = runtime.evaluate(idempotencyKey="run-1/call-1")
    assert first.status_code == 201 and again.status_code == 200 and again.json()["replayed"] is True
    assert again.json()["request"]["id"] == first.json()["request"]["id"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"patientRef": OTHER_PATIENT}, "patientRef"),
        ({"patientRef": ""}, "patientRef"),
        ({"requestedBy": "dr.wilson"}, "requestedBy"),
        ({"requestedBy": "Dr.House"}, "requestedBy"),  # the same person to four-eyes, but not the same call
        ({"dispatchMode": "ambient"}, "dispatchMode"),
        ({"dispatchMode": "operator"}, "dispatchMode"),
        ({"runId": "run-2"}, "runId"),
        ({"profile": "demo"}, "profile"),
        ({"args": {"drug": "amoxicillin", "dose": "5000 mg", "patientId": PATIENT}}, "args"),
        ({"tool": "createInvoiceDraft"}, "tool"),
        ({"tool": "listActiveMedications"}, "tool"),  # a call that would be allowed still may not take the key
    ],
)
def test_the_same_key_for_another_call_is_a_409_naming_what_differs(
    runtime: Runtime, change: dict[str, Any], field: str
) -> None:
    first = runtime.evaluate(idempotencyKey="run-1/call-1")
    assert first.status_code == 201
    response = runtime.evaluate(idempotencyKey="run-1/call-1", **change)
    assert response.status_code == 409, response.content
    body = response.json()
    assert body["reason"] == "idempotency-key-reused"
    assert body["detail"].startswith("idempotencyKey 'run-1/call-1' was already used for prescribeMedication; ")
    assert f"this call has {REPLAY_FIELDS[field]}: a new call needs a new idempotency key" in body["detail"]
    assert body["errors"] == [f"{field}: differs from the call this idempotencyKey was first used for"]
    assert body.get("request") is None  # the first request is not this caller's to see
    assert ApprovalRequest.objects.count() == 1


def test_a_409_names_every_field_that_differs_and_none_of_the_first_calls_values(runtime: Runtime) -> None:
    runtime.evaluate(idempotencyKey="k", requestedBy="dr.house", runId="run-secret-1")
    response = runtime.evaluate(
        idempotencyKey="k", patientRef=OTHER_PATIENT, requestedBy="dr.wilson", dispatchMode="ambient"
    )
    assert response.status_code == 409
    body = response.json()
    assert [e.partition(":")[0] for e in body["errors"]] == ["dispatchMode", "runId", "requestedBy", "patientRef"]
    assert (
        "a different dispatchMode, a different runId, a different requestedBy and a different patientRef"
        in (body["detail"])
    )
    text = response.content.decode()
    assert PATIENT not in text and "dr.house" not in text and "run-secret-1" not in text and "sha256" not in text


def test_replay_differences_compare_every_field_in_a_fixed_order() -> None:
    call = {name: f"value of {name}" for name in REPLAY_FIELDS}
    assert replay_differences(call, dict(call)) == []
    changed = {**call, "patientRef": "other", "tool": "other", "runId": "other"}
    assert replay_differences(call, changed) == ["tool", "runId", "patientRef"]
    message, errors = replay_conflict("k1", "prescribeMedication", ["args"])
    assert message == (
        "idempotencyKey 'k1' was already used for prescribeMedication; this call has different arguments: "
        "a new call needs a new idempotency key"
    )
    assert errors == ["args: differs from the call this idempotencyKey was first used for"]
