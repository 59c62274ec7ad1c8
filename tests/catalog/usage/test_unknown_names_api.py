"""GET /api/v1/usage/unknown-names: the board for services, behind the `catalog:read` scope."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from catalog.models import Tool, UnknownToolName
from catalog.usage.api import UNKNOWN_NAMES_MAX_LIMIT
from tests.conftest import condor_manifest, encode, signed_import

URL = "/api/v1/usage/unknown-names"
SEEN = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def names(db: Any) -> list[UnknownToolName]:
    signed_import(encode(condor_manifest()))
    made = [
        UnknownToolName.objects.create(
            name="prescribe_medicine", key="prescribe.medicine", calls=37, first_seen=SEEN - timedelta(days=2),
            last_seen=SEEN, services=["assistant"], agents=["clinical"],
        ),
        UnknownToolName.objects.create(
            name="zzqx", key="zzqx", source="ui", calls=2, first_seen=SEEN, last_seen=SEEN - timedelta(hours=1),
        ),
        UnknownToolName.objects.create(
            name="active_meds", key="active.meds", calls=1, first_seen=SEEN, last_seen=SEEN - timedelta(hours=2),
            verdict="alias", alias_of=Tool.objects.get(declared_id="listActiveMedications"),
        ),
    ]  # fmt: skip
    return made


def bearer(make_token: Any, *scopes: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {make_token('bot', scopes=scopes)}"})


def test_open_names_with_their_closest_tool_and_who_is_on_call(names: list[UnknownToolName], make_token: Any):
    answer = bearer(make_token, "catalog:read").get(URL)
    assert answer.status_code == 200
    body = answer.json()
    assert (body["count"], body["limit"], body["offset"]) == (2, 50, 0)
    first, second = body["items"]
    assert first == {
        "name": "prescribe_medicine",
        "source": "call",
        "calls": 37,
        "firstSeen": "2026-03-08T12:00:00Z",
        "lastSeen": "2026-03-10T12:00:00Z",
        "services": ["assistant"],
        "agents": ["clinical"],
        "verdict": "open",
        "aliasOf": None,
        "closest": {
            "system": "condor",
            "toolId": "prescribeMedication",
            "score": first["closest"]["score"],
            "team": "meds",
            "oncall": "@meds-oncall",
        },
    }
    assert 60 <= first["closest"]["score"] < 100
    assert second["name"] == "zzqx" and second["source"] == "ui" and second["closest"] is None


def test_filters_and_paging(names: list[UnknownToolName], make_token: Any):
    client = bearer(make_token, "catalog:read")
    aliased = client.get(URL, {"verdict": "alias"}).json()
    assert [i["name"] for i in aliased["items"]] == ["active_meds"]
    assert aliased["items"][0]["aliasOf"] == {"system": "condor", "toolId": "listActiveMedications"}
    everything = client.get(URL, {"verdict": "all", "limit": 1, "offset": 1}).json()
    assert everything["count"] == 3 and [i["name"] for i in everything["items"]] == ["zzqx"]
    clamped = client.get(URL, {"verdict": "all", "limit": 100_000}).json()
    assert clamped["limit"] == UNKNOWN_NAMES_MAX_LIMIT and len(clamped["items"]) == 3
    refused = client.get(URL, {"verdict": "decided"})
    assert refused.status_code == 422 and "verdict" in refused.json()["errors"][0]


def test_the_scope_is_catalog_read(names: list[UnknownToolName], make_token: Any):
    assert Client().get(URL).status_code == 401
    lacking = bearer(make_token, "approvals").get(URL)
    assert lacking.status_code == 403 and "catalog:read" in lacking.json()["detail"]
