"""What the two whole-console walks share (test_every_page: widths, offers and axe; test_german_walk: words):
the demo roles, a demo with one pending request made through the real API, and who may open which page."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from approvals.access import PAGE_ACCESS as APPROVALS_ACCESS
from catalog.core.access import PAGE_ACCESS
from catalog.models import ApiToken
from catalog.services.imports import catalog_import
from tests.catalog.mcp.test_governed_import import encode, referral_server

ROLES = ("admin", "safety", "oncall", "approver", "translator", "reviewer", "catalog-admin")
PATIENT = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"
ACCESS = {**PAGE_ACCESS, **APPROVALS_ACCESS}


@pytest.fixture
def demo_with_a_pending_request(live_server: Any, demo_committed: None) -> str:
    """The demo, the MCP server `referrals`, and one request the runtime suspended (through the real API)."""
    catalog_import(raw=encode(referral_server()), via="test")
    raw = ApiToken.generate()
    ApiToken.objects.create(name="runtime", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=["approvals"])
    body = {
        "tool": "prescribeMedication",
        "profile": "clinical-production",
        "dispatchMode": "supervised",
        "runId": "run-walk",
        "requestedBy": "dr.house",
        "patientRef": PATIENT,
        "args": {"patientId": PATIENT, "drug": "Amoxicillin", "dose": "500 mg", "route": "oral"},
        "idempotencyKey": "walk-1",
    }
    request = urllib.request.Request(
        live_server.url + "/api/v1/approvals/evaluate",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {raw}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the live test server
        answer = json.loads(response.read())
    assert answer["decision"] == "suspend"
    return str(answer["request"]["id"])
