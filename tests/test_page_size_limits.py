"""Lists keep their page size whatever a request asks for: the console's pages, the admin, the API (the demo's
431 tools and their findings)."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from django.test import Client

from catalog.models import Finding, Tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def olga(demo: None, make_user: Any) -> Client:
    client = Client()
    client.force_login(make_user("olga", "safety-officer"))
    return client


GREEDY = "?page_size=100000&per_page=100000&limit=100000&size=100000&all=1"


def test_console_list_pages_keep_their_page_size(olga: Client) -> None:
    assert Tool.objects.count() > 100
    tools = olga.get("/catalog/" + GREEDY).context["tools"]
    assert len(tools.object_list) == tools.paginator.per_page == 50
    for url, size in [("/cards/", 40), ("/revisions/", 50), ("/approvals/history/", 50)]:
        page = olga.get(url + GREEDY).context["page"]
        assert page.paginator.per_page == size and len(page.object_list) <= size, url
    # The findings page is grouped by rule: every group counted, at most FINDINGS_LISTED_MAX findings listed.
    with patch("catalog.selectors.governance.FINDINGS_LISTED_MAX", 10):
        groups = olga.get("/findings/" + GREEDY).context["groups"]
    assert sum(g.shown for g in groups) == 10 < sum(g.count for g in groups)
    assert len(olga.get("/catalog/?page=99999999999999999999").context["tools"].object_list) > 0  # the last page


def test_the_admin_changelist_keeps_its_page_size(olga: Client, make_user: Any) -> None:
    olga.force_login(make_user("root", is_staff=True, is_superuser=True))
    response = olga.get("/admin/catalog/tool/?all=")  # (unknown parameters such as page_size: "?e=1")
    changelist = response.context["cl"]
    # ?all= shows everything only up to list_max_show_all (200): the demo's 431 tools stay paginated.
    assert Tool.objects.count() > changelist.list_max_show_all
    assert len(changelist.result_list) == changelist.list_per_page == 100


def test_api_lists_clamp_a_greedy_limit(olga: Client, make_token: Any) -> None:
    api = Client(headers={"Authorization": f"Bearer {make_token('reader')}"})
    assert Finding.objects.count() > 0
    findings = api.get("/api/v1/catalog/findings?limit=100000")
    assert findings.status_code == 200 and findings.json()["limit"] == 500
    assert api.get("/api/v1/catalog/findings?limit=" + "9" * 40).json()["limit"] == 500
    revisions = api.get("/api/v1/catalog/revisions?limit=100000")
    assert revisions.status_code == 200 and len(revisions.json()) <= 200
