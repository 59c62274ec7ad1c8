"""A small two-system catalog for the approval tests, and the runtime's side of the API."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from tests.conftest import signed_import, tasks_in_process

PATIENT = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"
PRESCRIPTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "patientId": {"type": "string", "format": "uuid", "description": "Patient id (UUID)."},
        "pzn": {"type": "string", "pattern": "^[0-9]{8}$", "description": "Pharmazentralnummer (8 digits)."},
        "dosageInstructions": {"type": "string", "description": "Dosage instructions."},
        "packSize": {"type": "string", "enum": ["N1", "N2", "N3"], "description": "Pack size."},
        "autIdem": {"type": "boolean", "description": "Aut idem."},
    },
    "required": ["patientId", "pzn", "dosageInstructions", "packSize"],
    "additionalProperties": False,
}
PRESCRIPTION_ARGS = {"patientId": PATIENT, "pzn": "01234567", "dosageInstructions": "1-0-1", "packSize": "N1"}
_keys = itertools.count(1)


def condor_tools(m: Any) -> list[dict[str, Any]]:
    """The Condor tools of the approvals tests' catalog (a new list each call: edit it for a later import)."""
    return [
        m.mutate_tool("prescribeMedication", aliases=["medication.prescribe"]),
        m.mutate_tool("createInvoiceDraft", module="billing", policyDomain="billing", hitlTier="low"),
        m.condor_tool("listActiveMedications"),
        m.mutate_tool("draftReferralLetter", module="document", policyDomain="document", availability="preview"),
        m.condor_tool("searchTools", plane="planner-control", module="search", policyDomain=None),
        m.mutate_tool("bookAppointment", module="appointment", policyDomain="appointment", hitlTier="low"),
    ]


def condor_catalog(m: Any, tools: list[dict[str, Any]] | None = None) -> bytes:
    return m.encode(m.condor(condor_tools(m) if tools is None else tools, forcedFloors=[], baselineCount=5))


def load_catalog(manifests: Any) -> None:
    m = manifests
    signed_import(condor_catalog(m), via="test")
    prescription = m.tucan_tool("create-prescription", "prescriptions", mutating=True)
    prescription["inputSchema"] = PRESCRIPTION_SCHEMA
    tucan = m.tucan(
        [
            m.tucan_tool("show-modal"),
            prescription,
            m.tucan_tool("book-appointment", "appointments", mutating=True),
        ]
    )
    signed_import(m.encode(tucan), via="test")


@pytest.fixture(autouse=True)
def _in_process_celery() -> Iterator[None]:
    with tasks_in_process():
        yield


@pytest.fixture(autouse=True)
def _no_domain_aliases(settings: Any) -> None:
    """These tests' TUCAN tools keep their categories as domains (`prescriptions`), as an unmapped catalog's do;
    test_domain_aliases.py turns the mapping on."""
    settings.APPROVALS_DOMAIN_ALIASES = {}


@pytest.fixture(autouse=True)
def _fresh_catalog_index() -> Iterator[None]:
    """Each test builds its own catalog; a rolled-back test's revision ids come back in the next one."""
    from approvals.catalog_index import forget

    forget()
    yield
    forget()


@pytest.fixture
def catalog(db: Any, manifests: Any) -> None:
    load_catalog(manifests)


def evaluate_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "tool": "prescribeMedication",
        "profile": "clinical-production",
        "dispatchMode": "supervised",
        "runId": "run-1",
        "requestedBy": "dr.house",
        "patientRef": PATIENT,
        "args": {"drug": "amoxicillin", "dose": "500 mg", "patientId": PATIENT},
        "idempotencyKey": f"key-{next(_keys)}",
    }
    body.update(overrides)
    return body


class Runtime:
    """The runtime's calls, as a service with an `approvals` token makes them."""

    def __init__(self, client: Client, token: str) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"}

    def evaluate(self, **overrides: Any) -> Any:
        return self.client.post(
            "/api/v1/approvals/evaluate",
            data=evaluate_body(**overrides),
            content_type="application/json",
            headers=self.headers,
        )

    def suspend(self, **overrides: Any) -> dict[str, Any]:
        response = self.evaluate(**overrides)
        assert response.status_code == 201, response.content
        return response.json()["request"]

    def get(self, request_id: str, **params: Any) -> Any:
        return self.client.get(f"/api/v1/approvals/{request_id}", params, headers=self.headers)

    def consume(self, request_id: str, sha: str) -> Any:
        return self.client.post(
            f"/api/v1/approvals/{request_id}/consume",
            data={"argsSha256": sha},
            content_type="application/json",
            headers=self.headers,
        )

    def cancel(self, request_id: str, reason: str = "") -> Any:
        return self.client.post(
            f"/api/v1/approvals/{request_id}/cancel",
            data={"reason": reason},
            content_type="application/json",
            headers=self.headers,
        )


@pytest.fixture
def runtime(catalog: None, make_token: Any) -> Runtime:
    return Runtime(Client(), make_token("runtime", scopes=("approvals",)))


@pytest.fixture
def approver(make_user: Any) -> Any:
    return make_user("anna", "approver", "approver:medication", email="anna@example.org")


@pytest.fixture
def second_approver(make_user: Any) -> Any:
    return make_user("bert", "approver", "approver:medication", email="bert@example.org")
