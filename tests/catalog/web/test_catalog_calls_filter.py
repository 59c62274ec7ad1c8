"""The catalog's "Calls" filter: the tools with no call in the last CONDOR_USAGE_DEAD_DAYS days (what the team page
calls dead) or with some, every page of them and their export, reached from the team page's dead tools."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from catalog.models import TelemetrySource, Tool, ToolUsage
from catalog.usage.selectors.health import team_health
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(db: Any) -> dict[str, Tool]:
    tools = [mutate_tool("prescribeMedication"), condor_tool("listActiveMedications")]
    tools += [condor_tool(f"medicationRead{i}") for i in range(3)]
    signed_import(encode(condor_manifest(tools)))
    return {t.declared_id: t for t in Tool.objects.all()}


def called(tool: Tool, ago: timedelta, calls: int = 1) -> None:
    ToolUsage.objects.create(tool=tool, resolution="h", bucket=timezone.now() - ago, calls=calls, duration_counts=[])


def heard(ago: timedelta) -> None:
    now = timezone.now()
    TelemetrySource.objects.create(service="assistant", first_seen=now - ago, last_seen=now)


def ids_on(body: str, catalog: dict[str, Tool]) -> set[str]:
    return {tool_id for tool_id in catalog if f"/tools/condor/{tool_id}/" in body}


def test_none_and_some_split_the_catalog_by_the_dead_days(
    catalog: dict[str, Tool], oncall: Client, settings: Any
) -> None:
    heard(timedelta(days=40))
    called(catalog["listActiveMedications"], timedelta(hours=2))
    called(catalog["prescribeMedication"], timedelta(days=20))  # past the 14 days
    called(catalog["medicationRead0"], timedelta(days=1), calls=0)  # a row without a call is no call

    dead = oncall.get("/catalog/", {"calls": "none"}).content.decode()
    assert ids_on(dead, catalog) == set(catalog) - {"listActiveMedications"}
    assert "4 tools" in dead and "data-no-telemetry" not in dead
    some = oncall.get("/catalog/", {"calls": "some"}).content.decode()
    assert ids_on(some, catalog) == {"listActiveMedications"}

    settings.CONDOR_USAGE_DEAD_DAYS = 30
    assert ids_on(oncall.get("/catalog/", {"calls": "some"}).content.decode(), catalog) == {
        "listActiveMedications",
        "prescribeMedication",
    }
    assert "none in 30 days" in oncall.get("/catalog/").content.decode()  # the choice names the setting's days


def test_the_export_holds_exactly_the_filtered_tools(catalog: dict[str, Tool], oncall: Client) -> None:
    heard(timedelta(days=40))
    called(catalog["listActiveMedications"], timedelta(hours=2))
    response = oncall.get("/catalog/export.csv", {"calls": "none"})
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert {r["declared_id"] for r in rows} == set(catalog) - {"listActiveMedications"}


def test_before_any_telemetry_the_filter_says_why_every_tool_is_without_a_call(
    catalog: dict[str, Tool], oncall: Client
) -> None:
    body = oncall.get("/catalog/", {"calls": "none"}).content.decode()
    assert "data-no-telemetry" in body and ids_on(body, catalog) == set(catalog)
    assert "data-no-telemetry" not in oncall.get("/catalog/").content.decode()


def test_a_bad_choice_is_named_and_filters_nothing(catalog: dict[str, Tool], oncall: Client) -> None:
    body = oncall.get("/catalog/", {"calls": "dead"}).content.decode()
    assert "Select a valid choice" in body and ids_on(body, catalog) == set(catalog)


def test_the_team_pages_dead_tools_link_to_every_one_of_them_in_the_catalog(
    catalog: dict[str, Tool], oncall: Client
) -> None:
    heard(timedelta(days=40))
    called(catalog["medicationRead1"], timedelta(days=2))
    team = catalog["medicationRead1"].owner
    assert team is not None
    body = oncall.get(f"/teams/{team.slug}/").content.decode()
    link = f'href="/catalog/?owner={team.slug}&amp;calls=none" data-dead-in-catalog'
    assert link in body
    listed = oncall.get("/catalog/", {"owner": team.slug, "calls": "none"}).content.decode()
    health = team_health(team.pk)
    assert ids_on(listed, catalog) == {f.tool.declared_id for f in health.dead}
    owned = [t for t in catalog.values() if t.owner == team]
    assert len(ids_on(listed, catalog)) == health.dead_count == len(owned) - 1


def test_german_choices(catalog: dict[str, Tool], oncall: Client) -> None:
    body = oncall.get("/catalog/", headers={"Accept-Language": "de"}).content.decode()
    assert "keine in 14 Tagen" in body and "Aufrufe" in body
