"""A manifest that retires a tool and drops the team (and the ownership rule) that owned it: an import like any
other, committed, not an IntegrityError at commit and an HTTP 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.models import CatalogRevision, OwnershipRule, Team, Tool

URL = "/api/v1/catalog/revisions"
LABELS = {"id": "labels", "name": "Labels", "oncall": "@labels", "channel": "#labels", "escalation": "Page the lead"}


# Committed for real: the broken foreign key showed only when the import's transaction committed.
@pytest.mark.django_db(transaction=True)
def test_retiring_a_tool_with_its_team_and_rule_is_imported(client: Client, manifests: Any, make_token: Any) -> None:
    m = manifests
    token = make_token("ci-export")
    first = m.condor(
        [m.condor_tool("listActiveMedications"), m.condor_tool("printLabel", module="labels")],
        teams=[*m.condor()["teams"], LABELS],
        ownership=[{"plane": "business", "module": "labels", "team": "labels"}, *m.condor()["ownership"]],
    )
    headers = {"Authorization": f"Bearer {token}"}
    created = client.post(URL, data=m.encode(first), content_type="application/json", headers=headers)
    assert created.status_code == 201, created.content
    assert Tool.objects.get(declared_id="printLabel").owner.slug == "labels"

    second = m.condor([m.condor_tool("listActiveMedications")])  # no printLabel, no labels team, no labels rule
    response = client.post(URL, data=m.encode(second), content_type="application/json", headers=headers)

    assert response.status_code == 201, response.content
    assert response.json()["removed"] == ["printLabel"]
    retired = Tool.objects.get(declared_id="printLabel")
    assert retired.retired_in == CatalogRevision.objects.get(system="condor", number=2)
    # Who owned it stays on record (teams are shared and kept); the rule it came from is gone with the manifest.
    assert retired.owner == Team.objects.get(slug="labels") and retired.owner_rule is None
    assert not OwnershipRule.objects.filter(module="labels").exists()
