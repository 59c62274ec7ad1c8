"""What the API fuzzer (tests/test_api_fuzz.py) found, pinned: each was a 500 or a 4xx that was not JSON."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.models import ApprovalRequest
from catalog.services.imports import catalog_import
from tests.conftest import signed_import
from tests.test_api_fuzz import SCOPES

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(make_token: Any) -> Client:
    token = make_token("fuzz", scopes=tuple(SCOPES))
    return Client(headers={"Authorization": f"Bearer {token}"}, raise_request_exception=False)


def refusal(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json"), response.content
    body: dict[str, Any] = response.json()
    return body


def test_a_method_the_operation_lacks_is_a_json_405_naming_the_allowed_ones(api: Client) -> None:
    body = refusal(api.put("/api/v1/catalog/findings"), 405)
    assert body == {"detail": "method PUT not allowed here; use GET"}
    response = api.generic("TRACE", "/api/v1/approvals/evaluate")
    assert refusal(response, 405)["detail"] == "method TRACE not allowed here; use POST"
    assert response["Allow"] == "POST"


def test_a_findings_offset_past_a_64_bit_integer_is_refused_not_a_500(api: Client) -> None:
    body = refusal(api.get("/api/v1/catalog/findings", {"offset": 4231787484709816107008}), 422)
    assert body["errors"] == ["query.offset: Input should be less than or equal to 1000000"]
    assert api.get("/api/v1/catalog/findings", {"offset": 1_000_000}).json()["items"] == []


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("/api/v1/catalog/findings?owner=%00", "query.owner"),
        ("/api/v1/catalog/revisions?system=con%00dor", "query.system"),
        ("/api/v1/catalog/revisions/%00/1", "path.system"),
    ],
)
def test_a_nul_character_in_the_url_is_a_422_naming_the_parameter(api: Client, url: str, error: str) -> None:
    """PostgreSQL cannot compare text with NUL: these were 500s there (SQLite answered)."""
    body = refusal(api.get(url), 422)
    assert body["errors"] == [f"{error}: contains a NUL character (\\u0000), which cannot be stored; remove it"]


EVALUATE = {
    "tool": "prescribeMedication",
    "profile": "clinical-production",
    "dispatchMode": "supervised",
    "runId": "run-1",
    "requestedBy": "dr.house",
    "args": {"drug": "Amoxicillin"},
    "idempotencyKey": "run-1/call-1",
}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        # PostgreSQL refuses NUL in text and jsonb: 500s there.
        ({"runId": "run\x00"}, "body.payload.runId: Value error, contains a NUL character"),
        ({"args": {"drug": ["x\x00"]}}, "body.payload.args: Value error, drug[0]: contains a NUL character"),
        # UTF-8 has no lone surrogates: hashing the arguments raised UnicodeEncodeError, a 500 on both databases.
        ({"args": {"drug": "\ud800"}}, "body.payload.args: Value error, drug: contains a lone UTF-16 surrogate"),
    ],
)
def test_unstorable_text_in_an_evaluate_body_is_a_422_naming_where(
    api: Client, manifests: Any, change: dict[str, Any], error: str
) -> None:
    catalog_import(raw=manifests.encode(manifests.condor()), via="test")
    body = refusal(api.post("/api/v1/approvals/evaluate", {**EVALUATE, **change}, content_type="application/json"), 422)
    assert len(body["errors"]) == 1 and body["errors"][0].startswith(error), body
    assert not ApprovalRequest.objects.exists()


def test_a_nul_character_in_a_cancel_reason_is_a_422(api: Client, manifests: Any) -> None:
    signed_import(manifests.encode(manifests.condor()))  # signed off: the clinical profile is served it
    created = api.post("/api/v1/approvals/evaluate", EVALUATE, content_type="application/json").json()["request"]
    response = api.post(
        f"/api/v1/approvals/{created['id']}/cancel", {"reason": "done\x00"}, content_type="application/json"
    )
    assert "reason" in refusal(response, 422)["detail"]
    assert ApprovalRequest.objects.get().state == "pending"
