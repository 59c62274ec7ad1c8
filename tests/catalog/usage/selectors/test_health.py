"""Tool health from the rollups: the figures of the tool, team and dashboard sections, from rows made here, in a fixed
number of queries whatever the catalog size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from catalog.models import TelemetrySource, Tool, ToolExecution, ToolUsage, UnknownToolName
from catalog.usage.domain import histogram
from catalog.usage.selectors.health import dashboard_health, team_health, tool_health
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import

NOW = datetime(2026, 3, 10, 12, 30, tzinfo=UTC)  # 13:30 in Berlin (the console's zone), before the clock change


@pytest.fixture
def catalog(db: Any) -> dict[str, Tool]:
    signed_import(encode(condor_manifest()))
    return {t.declared_id: t for t in Tool.objects.all()}


def durations(*ms: float) -> list[int]:
    counts = histogram.empty()
    for value in ms:
        counts[histogram.bucket_of(value)] += 1
    return counts


def usage(tool: Tool, bucket: datetime, calls: int, errors: int = 0, retries: int = 0, ms: float = 40.0) -> ToolUsage:
    resolution = "m" if bucket.minute else "h"
    return ToolUsage.objects.create(
        tool=tool,
        resolution=resolution,
        bucket=bucket,
        calls=calls,
        errors=errors,
        retries=retries,
        duration_ms_sum=calls * ms,
        duration_counts=durations(*[ms] * calls),
    )


def heard(since: datetime, service: str = "assistant") -> TelemetrySource:
    return TelemetrySource.objects.create(service=service, first_seen=since, last_seen=NOW - timedelta(minutes=1))


def test_a_tools_day_and_week_from_minute_and_hour_rows(catalog: dict[str, Tool], django_assert_max_num_queries):
    tool = catalog["listActiveMedications"]
    heard(NOW - timedelta(days=30))
    usage(tool, datetime(2026, 3, 10, 12, 5, tzinfo=UTC), calls=4, errors=1, retries=1, ms=7)  # this hour, a minute
    usage(tool, datetime(2026, 3, 10, 10, tzinfo=UTC), calls=6, ms=30)  # an hour row two hours ago
    usage(tool, datetime(2026, 3, 9, 11, tzinfo=UTC), calls=5, errors=5, ms=3000)  # 25.5 h ago: the week only
    usage(tool, datetime(2026, 3, 4, 0, tzinfo=UTC), calls=10, errors=2)  # 01:00 Berlin, 6 days ago: first day
    usage(tool, datetime(2026, 3, 3, 22, tzinfo=UTC), calls=100)  # 23:00 Berlin, 7 days ago: outside the week
    usage(catalog["prescribeMedication"], datetime(2026, 3, 10, 12, tzinfo=UTC), calls=50)  # another tool
    for i in range(25):
        ToolExecution.objects.create(
            tool=tool,
            executed_at=NOW - timedelta(minutes=i),
            duration_ms=7,
            called_name="list_active_medications",
            trace_id=f"{i:032x}",
            span_id=f"{i:016x}",
        )

    with django_assert_max_num_queries(4):
        health = tool_health(tool.pk, now=NOW)

    assert (health.day.calls, health.day.errors, health.day.retries) == (10, 1, 1)
    assert health.day.error_rate == pytest.approx(0.1)
    # 4 calls in (5, 10] ms and 6 in (25, 50]: the median falls in the second bucket, interpolated inside it.
    assert health.day.p50_ms == pytest.approx(25 + 25 * (1 / 6))
    assert health.day.p95_ms == pytest.approx(25 + 25 * (5.5 / 6))
    assert (health.week.calls, health.week.errors) == (25, 8)
    assert health.week.p95_ms == pytest.approx(
        histogram.quantile(durations(*[7] * 4, *[30] * 6, *[3000] * 5, *[40] * 10), 0.95)
    )
    assert len(health.hourly) == 24 and health.hourly[-1].label == "13:00" and health.hourly[0].label == "14:00"
    assert [(p.calls, p.errors) for p in health.hourly[-3:]] == [(6, 0), (0, 0), (4, 1)]
    assert [p.calls for p in health.daily] == [10, 0, 0, 0, 0, 5, 10]
    assert [p.label for p in health.daily][-2:] == ["Mon 9", "Tue 10"]
    assert health.hourly_chart[-1] == ("13:00", 4, 1) and health.daily_chart[0] == ("Wed 4", 10, 2)
    assert len(health.executions) == 20 and health.executions[0].executed_at == NOW
    assert health.last_call == NOW


def test_a_tool_that_was_never_called_and_a_console_that_never_heard_a_runtime(catalog: dict[str, Tool]):
    tool = catalog["prescribeMedication"]
    health = tool_health(tool.pk, now=NOW)
    assert not health.telemetry.active and health.last_call is None and health.day.error_rate is None
    assert health.day.p50_ms is None and [p.calls for p in health.daily] == [0] * 7
    heard(NOW - timedelta(days=2))
    assert tool_health(tool.pk, now=NOW).telemetry.first_seen == NOW - timedelta(days=2)


def test_without_an_execution_sample_the_last_call_is_the_newest_rollup(catalog: dict[str, Tool]):
    tool = catalog["prescribeMedication"]
    usage(tool, NOW - timedelta(days=20), calls=3)
    usage(tool, NOW - timedelta(days=21), calls=3)
    assert tool_health(tool.pk, now=NOW).last_call == NOW - timedelta(days=20)


def many_tools(n: int) -> None:
    tools = [mutate_tool("prescribeMedication"), condor_tool("listActiveMedications")]
    tools += [condor_tool(f"medicationRead{i}") for i in range(n)]
    signed_import(encode(condor_manifest(tools)))


@pytest.mark.parametrize("extra", [0, 60])
def test_a_teams_tools_with_their_dead_ones(db: Any, extra: int, django_assert_max_num_queries):
    many_tools(extra)
    tools = {t.declared_id: t for t in Tool.objects.all()}
    team = tools["listActiveMedications"].owner
    heard(NOW - timedelta(days=30))
    usage(tools["listActiveMedications"], NOW - timedelta(minutes=90), calls=7, errors=2)  # 11:00 UTC: in the day
    usage(tools["listActiveMedications"], NOW - timedelta(days=3), calls=5, errors=1)
    usage(tools["listActiveMedications"], NOW - timedelta(days=9), calls=100)  # counts for neither window
    usage(tools["prescribeMedication"], NOW - timedelta(days=15), calls=1)  # last call past the 14 days

    with django_assert_max_num_queries(4):  # telemetry, the listed tools' figures, the dead ones', the dead count
        health = team_health(team.pk, now=NOW)

    rows = {f.tool.declared_id: f for f in health.tools}
    assert len(rows) == 2 + extra
    listed = rows["listActiveMedications"]
    assert (listed.calls_day, listed.errors_day, listed.calls_week, listed.errors_week) == (7, 2, 12, 3)
    assert listed.last_call == NOW - timedelta(minutes=90)
    assert (rows["prescribeMedication"].calls_week, rows["prescribeMedication"].errors_day) == (0, 0)
    assert health.dead_mode == "dead" and health.dead_days == 14
    dead = [f.tool.declared_id for f in health.dead]
    assert "prescribeMedication" in dead and "listActiveMedications" not in dead and len(dead) == 1 + extra
    assert health.dead_count == 1 + extra


def test_a_large_team_lists_its_first_tools_and_counts_every_dead_one(db: Any, django_assert_max_num_queries):
    many_tools(150)
    team = Tool.objects.get(declared_id="listActiveMedications").owner
    assert team is not None
    heard(NOW - timedelta(days=30))
    usage(Tool.objects.get(declared_id="medicationRead3"), NOW - timedelta(days=1), calls=2)
    with django_assert_max_num_queries(4):
        health = team_health(team.pk, now=NOW, shown=100)
    listed = [f.tool.declared_id for f in health.tools]
    # The catalog's order (declared id): the page lists the same first tools as the catalog filtered by the team.
    assert len(listed) == 100 and listed == sorted(listed) and listed[0] == "listActiveMedications"
    called = next(f for f in health.tools if f.tool.declared_id == "medicationRead3")
    assert called.calls_week == 2
    dead = [f.tool.declared_id for f in health.dead]
    assert len(dead) == 100 and "medicationRead3" not in dead
    assert health.dead_count == 152 - 1  # every live tool of the team but the one called, listed or not


def test_dead_means_no_call_in_the_configured_days_and_not_before_telemetry(catalog: dict[str, Tool], settings: Any):
    team = catalog["prescribeMedication"].owner
    usage(catalog["prescribeMedication"], NOW - timedelta(days=15), calls=1)
    # No runtime ever heard: nothing is called dead.
    health = team_health(team.pk, now=NOW)
    assert health.dead_mode == "no-telemetry" and health.dead == []
    # Telemetry began 3 days ago: too soon to call anything dead; the list says since when nothing was called.
    source = heard(NOW - timedelta(days=3))
    health = team_health(team.pk, now=NOW)
    assert health.dead_mode == "since-telemetry"
    assert {f.tool.declared_id for f in health.dead} == {"prescribeMedication", "listActiveMedications"}
    source.first_seen = NOW - timedelta(days=40)
    source.save()
    settings.CONDOR_USAGE_DEAD_DAYS = 30
    health = team_health(team.pk, now=NOW)
    assert health.dead_mode == "dead" and health.dead_days == 30
    assert [f.tool.declared_id for f in health.dead] == ["listActiveMedications"]  # called 15 days ago: alive


@pytest.mark.parametrize("extra", [0, 60])
def test_the_dashboard_over_every_tool(db: Any, extra: int, django_assert_max_num_queries):
    many_tools(extra)
    tools = {t.declared_id: t for t in Tool.objects.all()}
    heard(NOW - timedelta(days=30), "assistant")
    heard(NOW - timedelta(days=2), "scribe")
    for i in range(extra):
        usage(tools[f"medicationRead{i}"], NOW - timedelta(hours=2), calls=1, errors=i % 2)
    usage(tools["prescribeMedication"], datetime(2026, 3, 10, 12, 1, tzinfo=UTC), calls=9, errors=6)
    usage(tools["prescribeMedication"], datetime(2026, 3, 10, 12, 2, tzinfo=UTC), calls=1, errors=1)
    usage(tools["listActiveMedications"], datetime(2026, 3, 9, 13, tzinfo=UTC), calls=20, errors=2)  # first hour
    usage(tools["listActiveMedications"], datetime(2026, 3, 9, 12, tzinfo=UTC), calls=500, errors=500)  # too old
    now = NOW
    UnknownToolName.objects.create(name="get_notes", key="get.notes", calls=3, first_seen=now, last_seen=now)
    UnknownToolName.objects.create(name="x", key="x", calls=1, first_seen=now, last_seen=now, verdict="ignore")

    with django_assert_max_num_queries(4):
        health = dashboard_health(now=NOW)

    assert (health.day.calls, health.day.errors) == (30 + extra, 9 + extra // 2)
    assert len(health.hourly) == 24 and health.hourly[0].calls == 20 and health.hourly[-1].calls == 10
    assert health.hourly_chart[-1] == ("13:00", 10, 7)
    leaders = [(t.declared_id, t.errors, t.calls) for t in health.top_errors]
    assert leaders[:2] == [("prescribeMedication", 7, 10), ("listActiveMedications", 2, 20)]
    assert len(leaders) == min(5, 2 + extra // 2)
    assert health.open_unknown_names == 1
    assert [s.service for s in health.sources] == ["assistant", "scribe"]  # newest heard first, then by name
    assert health.telemetry.first_seen == NOW - timedelta(days=30)
