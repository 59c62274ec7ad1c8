"""The health sections of the tool, team and dashboard pages, and the unknown-names board: who reads, who judges,
and a refused alias shown beside its field with the input kept."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from catalog.models import TelemetrySource, Tool, ToolExecution, ToolUsage, UnknownToolName
from catalog.usage.domain import histogram
from tests.conftest import condor_manifest, encode, signed_import, signed_in


@pytest.fixture
def catalog(db: Any) -> dict[str, Tool]:
    signed_import(encode(condor_manifest()))
    return {t.declared_id: t for t in Tool.objects.all()}


@pytest.fixture
def telemetry(catalog: dict[str, Tool]) -> UnknownToolName:
    now = timezone.now()
    TelemetrySource.objects.create(service="assistant", first_seen=now - timedelta(days=30), last_seen=now)
    tool = catalog["listActiveMedications"]
    counts = histogram.empty()
    counts[histogram.bucket_of(40)] = 12
    hour = now.replace(minute=0, second=0, microsecond=0)
    ToolUsage.objects.create(tool=tool, resolution="h", bucket=hour, calls=12, errors=3, duration_counts=counts)
    ToolExecution.objects.create(
        tool=tool,
        executed_at=now,
        duration_ms=41,
        error_type="upstream_503",
        tool_call_id="call-77",
        called_name="list_active_medications",
        trace_id="a" * 32,
        span_id="b" * 16,
        service="assistant",
        agent="clinical",
    )
    return UnknownToolName.objects.create(
        name="list_active_medication", key="list.active.medication", calls=37, first_seen=now, last_seen=now,
        services=["assistant"], agents=["clinical"],
    )  # fmt: skip


def test_pages_say_no_telemetry_yet_before_any_runtime_reported(catalog: dict[str, Tool], make_user: Any):
    client = signed_in(make_user, "rita")
    tool = client.get("/tools/condor/listActiveMedications/").content.decode()
    assert "Runtime health" in tool and "No telemetry yet" in tool and '<svg class="bar-chart"' not in tool
    team = client.get("/teams/meds/").content.decode()
    assert "so no tool is called dead" in team
    home = client.get("/").content.decode()
    assert "Runtime, last 24 hours" in home and "No telemetry yet" in home


def test_the_tool_team_and_dashboard_show_what_ran(telemetry: UnknownToolName, make_user: Any):
    client = signed_in(make_user, "rita")
    tool = client.get("/tools/condor/listActiveMedications/").content.decode()
    assert tool.count('<svg class="bar-chart"') == 2 and 'role="img"' in tool
    assert "In all: calls 12, errors 3." in tool
    assert "25.0 %" in tool  # the error rate
    assert "upstream_503" in tool and "call-77" in tool and "list_active_medications" in tool
    never = client.get("/tools/condor/prescribeMedication/").content.decode()
    assert "No call since telemetry began on" in never
    team = client.get("/teams/meds/").content.decode()
    row = re.search(r'<tr data-tool="condor:listActiveMedications">.*?</tr>', team, re.S).group(0)  # type: ignore[union-attr]
    assert '<span class="badge error">3</span>' in row and ">12<" in row
    dead = re.search(r'<section class="card dead-tools".*?</section>', team, re.S).group(0)  # type: ignore[union-attr]
    assert "no call in the last 14 days" in dead and "prescribeMedication" in dead and "listActive" not in dead
    home = client.get("/").content.decode()
    assert "condor:listActiveMedications" in home and "1 open unknown tool name" in home and "assistant" in home


def test_everyone_signed_in_reads_the_board(telemetry: UnknownToolName, make_user: Any):
    page = signed_in(make_user, "tara", "translator").get("/usage/unknown/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "list_active_medication" in html and "condor:listActiveMedications" in html
    assert "@meds-oncall" in html and "Clinical Medication" in html
    assert "Read-only" in html and 'name="verdict"' not in html
    assert Client().get("/usage/unknown/").status_code == 302  # signed out: to the sign-in page


def test_on_call_marks_an_alias_and_the_board_gives_the_advice(telemetry: UnknownToolName, make_user: Any):
    client = signed_in(make_user, "oona", "on-call")
    form = client.get("/usage/unknown/").content.decode()
    # The closest tool is offered in the field: one click marks it.
    assert 'value="condor:listActiveMedications"' in form
    answer = client.post(
        "/usage/unknown/verdict",
        {"name_id": telemetry.pk, "verdict": "alias", "alias_of": "condor:listActiveMedications", "show": "open"},
    )
    assert answer.status_code == 302 and answer["Location"] == "/usage/unknown/"
    telemetry.refresh_from_db()
    assert telemetry.verdict == "alias" and telemetry.alias_of.declared_id == "listActiveMedications"
    assert "No open names" in client.get("/usage/unknown/").content.decode()
    decided = client.get("/usage/unknown/?show=alias").content.decode()
    assert (
        "Add <code>list_active_medication</code> to the aliases of <strong>listActiveMedications</strong> "
        "in its source manifest (condor), then re-import." in decided
    )
    assert "by oona" in decided and 'value="open"' in decided
    back = client.post("/usage/unknown/verdict", {"name_id": telemetry.pk, "verdict": "open", "show": "alias"})
    assert back["Location"] == "/usage/unknown/?show=alias"
    telemetry.refresh_from_db()
    assert telemetry.verdict == "" and telemetry.alias_of is None


def test_a_tool_that_is_not_there_is_refused_beside_the_field(telemetry: UnknownToolName, make_user: Any):
    client = signed_in(make_user, "ada", "catalog-admin")
    answer = client.post(
        "/usage/unknown/verdict", {"name_id": telemetry.pk, "verdict": "alias", "alias_of": "listActiveMeds"}
    )
    assert answer.status_code == 400
    html = answer.content.decode()
    field = re.search(rf'<input id="alias-{telemetry.pk}".*?>', html, re.S).group(0)  # type: ignore[union-attr]
    assert 'value="listActiveMeds"' in field and 'aria-invalid="true"' in field  # the input kept
    error = re.search(rf'<ul class="errorlist" id="alias-{telemetry.pk}-error">.*?</ul>', html, re.S).group(0)  # type: ignore[union-attr]
    assert "no live tool is called listActiveMeds; did you mean condor:listActiveMedications?" in error
    telemetry.refresh_from_db()
    assert telemetry.verdict == ""


def test_a_translator_may_not_judge(telemetry: UnknownToolName, make_user: Any):
    client = signed_in(make_user, "tara", "translator")
    answer = client.post("/usage/unknown/verdict", {"name_id": telemetry.pk, "verdict": "ignore"})
    assert answer.status_code == 403
    assert "This is not open to you" in answer.content.decode()  # the console's page with the way back, not bare text
    telemetry.refresh_from_db()
    assert telemetry.verdict == ""
    assert client.get("/usage/unknown/verdict").status_code == 405


def test_the_board_pages_fifty_names(catalog: dict[str, Tool], make_user: Any, django_assert_max_num_queries):
    now = timezone.now()
    UnknownToolName.objects.bulk_create(
        UnknownToolName(name=f"made_up_{i:03d}", key=f"made.up.{i:03d}", calls=1, first_seen=now,
                        last_seen=now - timedelta(minutes=i))
        for i in range(120)
    )  # fmt: skip
    client = signed_in(make_user, "rita")
    client.get("/usage/unknown/")  # warm the owner-lookup index, as a running server has it
    with django_assert_max_num_queries(8):  # session, user, roles, counts, the page, catalog version, closest tools
        first = client.get("/usage/unknown/").content.decode()
    assert first.count("<tr data-name=") == 50 and "Page 1 of 3" in first and "made_up_049" in first
    last = client.get("/usage/unknown/?page=3").content.decode()
    assert last.count("<tr data-name=") == 20 and "made_up_119" in last
    assert client.get("/usage/unknown/?page=abc&show=nonsense").status_code == 200  # a bad filter: the defaults
