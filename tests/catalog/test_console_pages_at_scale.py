"""Console pages whose cost does not grow with the catalog (issue 24): a team page lists its first tools and links to
the catalog filtered by the team, and the teams page's findings are the kept counts."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.models import Finding, Tool
from catalog.selectors.teams import teams_overview
from catalog.web.views import teams

pytestmark = pytest.mark.django_db


@pytest.fixture
def oncall(demo: None, make_user: Any) -> Client:
    client = Client()
    client.force_login(make_user("oscar", "on-call"))
    return client


def test_a_large_team_page_lists_its_first_tools_and_links_to_all_of_them(
    oncall: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    owned = Tool.objects.live().filter(owner__slug="clinical-meds").count()
    assert owned > 1
    monkeypatch.setattr(teams, "TEAM_PAGE_TOOLS", 1)
    body = oncall.get("/teams/clinical-meds/").content.decode()
    assert f"The first 1 of {owned} tools." in body
    assert 'href="/catalog/?owner=clinical-meds"' in body
    assert body.count('<th scope="row"><a class="mono" href="/tools/') == 1
    monkeypatch.setattr(teams, "TEAM_PAGE_TOOLS", 100)
    assert "The first" not in oncall.get("/teams/clinical-meds/").content.decode()  # all shown: no note


def test_the_teams_overview_counts_findings_from_the_kept_counts(oncall: Client) -> None:
    for row in teams_overview():
        live = Finding.objects.filter(tool__owner=row["team"], tool__retired_in__isnull=True)
        assert row["errors"] == live.filter(severity="error").count()
        assert row["warnings"] == live.filter(severity="warning").count()
