"""Input limits: oversized bodies are a 413 that says the limit (JSON under the API), and no list page or API
list grows past its page size whatever the query string asks for."""

from __future__ import annotations

import io
import json
from typing import Any
from unittest.mock import patch

import pytest
from django.conf import settings as live_settings
from django.core.management import call_command
from django.test import Client

from catalog.models import Finding, Tool

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


@pytest.fixture
def demo(db: Any, make_user: Any) -> Client:
    call_command("load_demo", stdout=io.StringIO())
    client = Client()
    client.force_login(make_user("olga", "safety-officer"))
    return client


GREEDY = "?page_size=100000&per_page=100000&limit=100000&size=100000&all=1"


def test_console_list_pages_keep_their_page_size(demo: Client) -> None:
    assert Tool.objects.count() > 100
    tools = demo.get("/catalog/" + GREEDY).context["tools"]
    assert len(tools.object_list) == tools.paginator.per_page == 50
    for url, size in [("/cards/", 40), ("/revisions/", 50), ("/approvals/history/", 50)]:
        page = demo.get(url + GREEDY).context["page"]
        assert page.paginator.per_page == size and len(page.object_list) <= size, url
    # The findings page is grouped by rule: every group counted, at most FINDINGS_LISTED_MAX findings listed.
    with patch("catalog.selectors.governance.FINDINGS_LISTED_MAX", 10):
        groups = demo.get("/findings/" + GREEDY).context["groups"]
    assert sum(g.shown for g in groups) == 10 < sum(g.count for g in groups)
    assert len(demo.get("/catalog/?page=99999999999999999999").context["tools"].object_list) > 0  # the last page


def test_the_admin_changelist_keeps_its_page_size(demo: Client, make_user: Any) -> None:
    demo.force_login(make_user("root", is_staff=True, is_superuser=True))
    response = demo.get("/admin/catalog/tool/?all=")  # (unknown parameters such as page_size: "?e=1")
    changelist = response.context["cl"]
    # ?all= shows everything only up to list_max_show_all (200): the demo's 431 tools stay paginated.
    assert Tool.objects.count() > changelist.list_max_show_all
    assert len(changelist.result_list) == changelist.list_per_page == 100


def test_api_lists_clamp_a_greedy_limit(demo: Client, make_token: Any) -> None:
    api = Client(headers={"Authorization": f"Bearer {make_token('reader')}"})
    assert Finding.objects.count() > 0
    findings = api.get("/api/v1/catalog/findings?limit=100000")
    assert findings.status_code == 200 and findings.json()["limit"] == 500
    assert api.get("/api/v1/catalog/findings?limit=" + "9" * 40).json()["limit"] == 500
    revisions = api.get("/api/v1/catalog/revisions?limit=100000")
    assert revisions.status_code == 200 and len(revisions.json()) <= 200
