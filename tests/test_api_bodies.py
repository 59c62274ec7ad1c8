"""Request bodies: a repeated JSON key is refused with where it is (the last one no longer silently wins), and a
body that is not JSON says where it stops being JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from approvals.models import ApprovalRequest
from tests.conftest import signed_import

pytestmark = pytest.mark.django_db
EVALUATE = {
    "tool": "prescribeMedication",
    "profile": "clinical-production",
    "dispatchMode": "supervised",
    "runId": "run-1",
    "requestedBy": "dr.house",
    "patientRef": "pat-1",
    "args": {"drug": "Amoxicillin"},
    "idempotencyKey": "run-1/call-1",
}


@pytest.fixture
def runtime(make_token: Any, manifests: Any) -> Client:
    signed_import(manifests.encode(manifests.condor()))
    return Client(headers={"Authorization": f"Bearer {make_token('runtime', scopes=('approvals',))}"})


def test_a_repeated_key_in_an_evaluate_body_is_a_422_naming_it(runtime: Client) -> None:
    body = json.dumps(EVALUATE).replace('"patientRef": "pat-1"', '"patientRef": "pat-1", "patientRef": "pat-2"')
    body = body.replace('"drug": "Amoxicillin"', '"drug": "Amoxicillin", "drug": "Fentanyl"')
    response = runtime.post("/api/v1/approvals/evaluate", body, content_type="application/json")
    assert response.status_code == 422
    assert response.json() == {
        "detail": "invalid request",
        "errors": [
            "body.patientRef: the key appears more than once in this object; JSON readers keep only one of them, "
            "so say it once",
            "body.args.drug: the key appears more than once in this object; JSON readers keep only one of them, "
            "so say it once",
        ],
    }
    assert not ApprovalRequest.objects.exists()


def test_a_body_that_is_not_json_says_where(runtime: Client) -> None:
    response = runtime.post("/api/v1/approvals/evaluate", '{"tool": "x",', content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "the body is not JSON: Expecting property name enclosed in double quotes at line 1, column 14"
    }


def test_the_same_body_without_the_repeat_is_accepted(runtime: Client) -> None:
    response = runtime.post("/api/v1/approvals/evaluate", json.dumps(EVALUATE), content_type="application/json")
    assert response.status_code in (200, 201, 202), response.content
    assert ApprovalRequest.objects.count() == 1
