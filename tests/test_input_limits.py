"""Input limits: oversized bodies are a 413 that says the limit (JSON under the API), and no list page or API
list grows past its page size whatever the query string asks for."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings as live_settings
from django.test import Client

MANIFEST_URL = "/api/v1/catalog/revisions"
# Every API endpoint that takes a body (and a made-up one: the cap does not depend on a route existing).
BODY_ENDPOINTS = [
    "/api/v1/approvals/evaluate",
    "/api/v1/approvals/0b7c2f2e-7d1e-4a53-9b0e-6f8c3d2a1b00/consume",
    "/api/v1/approvals/0b7c2f2e-7d1e-4a53-9b0e-6f8c3d2a1b00/cancel",
    "/api/v1/rag/resolve",
    "/api/v1/no-such-endpoint",
]


def test_django_reads_manifests_up_to_their_own_cap() -> None:
    """DATA_UPLOAD_MAX_MEMORY_SIZE must sit above the manifest cap, or a legal manifest would be a bare 400."""
    assert live_settings.DATA_UPLOAD_MAX_MEMORY_SIZE > live_settings.CONDOR_MAX_MANIFEST_BYTES
    assert live_settings.CONDOR_MAX_REQUEST_BYTES < live_settings.CONDOR_MAX_MANIFEST_BYTES


@pytest.mark.parametrize("url", BODY_ENDPOINTS)
def test_an_api_body_over_the_cap_is_a_413_in_json(client: Client, settings: Any, make_token: Any, url: str) -> None:
    settings.CONDOR_MAX_REQUEST_BYTES = 2048
    token = make_token("runtime", scopes=("approvals", "rag", "catalog:write"))
    body = json.dumps({"args": {"note": "x" * 4096}})
    response = client.post(url, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 413
    assert response.json() == {
        "detail": f"request body is {len(body)} bytes; the limit is 2048 bytes (CONDOR_MAX_REQUEST_BYTES)"
    }


def test_the_cap_is_checked_before_authentication(client: Client, settings: Any) -> None:
    """Nobody gets a large body parsed, not even to be told their token is wrong."""
    settings.CONDOR_MAX_REQUEST_BYTES = 100
    response = client.post("/api/v1/approvals/evaluate", "x" * 200, content_type="application/json")
    assert response.status_code == 413


def test_a_body_at_the_cap_is_let_through(client: Client, settings: Any, make_token: Any) -> None:
    settings.CONDOR_MAX_REQUEST_BYTES = 2048
    token = make_token("runtime", scopes=("approvals",))
    body = json.dumps({"reason": "x" * 100})
    url = "/api/v1/approvals/0b7c2f2e-7d1e-4a53-9b0e-6f8c3d2a1b00/cancel"
    response = client.post(url, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 404  # read, parsed and answered: there is no such request


def test_a_manifest_is_bound_by_its_own_larger_cap(
    client: Client, settings: Any, manifests: Any, make_token: Any
) -> None:
    settings.CONDOR_MAX_REQUEST_BYTES = 100
    body = manifests.encode(manifests.condor())
    assert len(body) > 100
    headers = {"Authorization": f"Bearer {make_token('ci-export')}"}
    response = client.post(MANIFEST_URL, body, content_type="application/json", headers=headers)
    assert response.status_code == 201, response.content
    settings.CONDOR_MAX_MANIFEST_BYTES = 200
    response = client.post(MANIFEST_URL, body, content_type="application/json", headers=headers)
    assert response.status_code == 413
    assert response.json()["detail"] == (
        f"manifest is {len(body)} bytes; the limit is 200 bytes (CONDOR_MAX_MANIFEST_BYTES)"
    )


def test_a_console_post_over_the_cap_is_a_413_that_says_why(client: Client, settings: Any) -> None:
    settings.CONDOR_MAX_REQUEST_BYTES = 1024
    response = client.post("/login/", {"username": "olga", "password": "x" * 2000})
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/plain")
    assert "the limit is 1024 bytes (CONDOR_MAX_REQUEST_BYTES)" in response.content.decode()
