"""GET /api/v1/catalog/findings, as a chat-ops bot or a dashboard reads it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from catalog.models import Tool
from catalog.services.governance import waiver_grant
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db
URL = "/api/v1/catalog/findings"


@pytest.fixture
def auth(make_token: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {make_token()}"}


def load(manifests: Any, extra: int = 0) -> None:
    tools = [
        manifests.mutate_tool("prescribeMedication"),
        manifests.condor_tool("listActiveMedications"),
        manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none"),
        *[manifests.condor_tool(f"listThing{i}", ragKeywords={"en": ["x"]}) for i in range(extra)],
    ]
    catalog_import(raw=manifests.encode(manifests.condor(tools, baselineCount=3 + extra)), via="test")


def test_lists_findings_with_filters(client: Client, manifests: Any, auth: dict[str, str]) -> None:
    load(manifests)
    body = client.get(URL, headers=auth).json()
    assert body["count"] == 2
    assert [(f["rule"], f["tool"], f["severity"]) for f in body["items"]] == [
        ("mutate-without-hitl", "stopMedication", "error"),
        ("policy-class-fallback", "stopMedication", "warning"),
    ]
    assert body["items"][0]["owner"] == "meds" and body["items"][0]["revision"] == 1
    assert client.get(URL, {"severity": "warning"}, headers=auth).json()["count"] == 1
    assert client.get(URL, {"rule": "unowned"}, headers=auth).json()["count"] == 0
    assert client.get(URL, {"owner": "meds", "system": "condor"}, headers=auth).json()["count"] == 2
    assert client.get(URL, {"owner": "-"}, headers=auth).json()["count"] == 0


def test_waived_filter_and_fields(client: Client, manifests: Any, auth: dict[str, str], make_user: Any) -> None:
    load(manifests)
    officer = make_user("olga", "safety-officer")
    waiver_grant(
        tool_id=Tool.objects.get(declared_id="stopMedication").pk,
        rule="policy-class-fallback",
        justification="Fix ships next sprint.",
        expires_at=timezone.now() + timedelta(days=10),
        granted_by=officer,
    )
    (waived,) = client.get(URL, {"waived": "true"}, headers=auth).json()["items"]
    assert waived["rule"] == "policy-class-fallback" and waived["waived"] and waived["waived_by"] == "olga"
    (open_,) = client.get(URL, {"waived": "false"}, headers=auth).json()["items"]
    assert open_["rule"] == "mutate-without-hitl" and open_["waived_until"] is None


def test_bad_filters_are_a_422_that_says_which(client: Client, auth: dict[str, str], db: Any) -> None:
    response = client.get(URL, {"rule": "nope", "severity": "fatal", "system": "x"}, headers=auth)
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert errors[0].startswith("rule: unknown rule 'nope'; known rules are ")
    assert errors[1] == "severity: expected one of error, warning"
    assert errors[2] == "system: expected condor, tucan or mcp:<server id>"
    # A greedy page size is clamped (and the answer says to what), not refused.
    assert client.get(URL, {"limit": 5000}, headers=auth).json()["limit"] == 500


def test_needs_a_catalog_token(client: Client, make_token: Any, db: Any) -> None:
    assert client.get(URL).status_code == 401
    rag_only = {"Authorization": f"Bearer {make_token('rag', scopes=('rag',))}"}
    assert client.get(URL, headers=rag_only).status_code == 403


@pytest.mark.parametrize("extra", [0, 150])
def test_query_count_is_fixed_whatever_the_catalog_size(
    client: Client, manifests: Any, auth: dict[str, str], extra: int, django_assert_num_queries: Any
) -> None:
    load(manifests, extra)
    # token lookup, last-used update, the page of findings, the count
    with django_assert_num_queries(4):
        body = client.get(URL, {"limit": 500}, headers=auth).json()
    assert body["count"] == 2 + extra
