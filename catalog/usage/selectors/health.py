"""Tool health from what the runtime reported: per tool, per team and for the dashboard, each in a fixed number of
queries whatever the catalog size.

Windows: "24 h" is the current hour and the 23 before it (hourly points), "7 d" today and the 6 days before it
(daily points, days in the console's time zone). Rollup rows are minutes or, once compacted, hours; a minute's
rows are deleted when its hour's row is written, so summing both resolutions over a window never counts twice.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, Max, Min, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import TruncHour
from django.utils import timezone
from django.utils.formats import date_format

from catalog.models import TelemetrySource, Tool, ToolExecution, ToolUsage, UnknownToolName
from catalog.usage.domain import histogram

HOURS = 24
DAYS = 7
RECENT_EXECUTIONS = 20
TOP_ERRORS = 5
SOURCES_SHOWN = 20


def dead_days() -> int:
    return int(getattr(settings, "CONDOR_USAGE_DEAD_DAYS", 14))


def called_recently(now: datetime | None = None) -> Exists:
    """Whether the outer tool row had a call in the last `dead_days()` days: a dead tool is one without (the team
    page's dead tools, the catalog's "Calls" filter). PostgreSQL probes each tool's rows by the usage's tool index;
    its cost at 50,000 tools: bench/README.md, "With telemetry"."""
    cutoff = (now or timezone.now()) - timedelta(days=dead_days())
    return Exists(ToolUsage.objects.filter(tool=OuterRef("pk"), calls__gt=0, bucket__gte=cutoff))


def _hour_of(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def _day_bounds(now: datetime) -> list[datetime]:
    """The starts of the 6 days before today, today's and tomorrow's (8 bounds of 7 days), in the console's time
    zone (a day of a clock change has 23 or 25 hours)."""
    zone = timezone.get_current_timezone()
    today = timezone.localtime(now, zone).date()
    return [datetime.combine(today - timedelta(days=DAYS - 1 - i), time.min, tzinfo=zone) for i in range(DAYS + 1)]


def _hour_bounds(now: datetime) -> list[datetime]:
    """The starts of the 23 hours before the current one, the current one's and the next one's (UTC)."""
    last = _hour_of(now)
    return [last - timedelta(hours=HOURS - 1 - i) for i in range(HOURS + 1)]


@dataclass(frozen=True)
class Point:
    start: datetime
    label: str
    calls: int = 0
    errors: int = 0


@dataclass(frozen=True)
class Window:
    calls: int = 0
    errors: int = 0
    retries: int = 0
    p50_ms: float | None = None
    p95_ms: float | None = None

    @property
    def error_rate(self) -> float | None:
        """Errors per call (0..1), None without calls."""
        return self.errors / self.calls if self.calls else None


@dataclass(frozen=True)
class Telemetry:
    """Whether any runtime service sent spans, and since when: tells "no calls" from "no telemetry"."""

    first_seen: datetime | None
    last_seen: datetime | None

    @property
    def active(self) -> bool:
        return self.first_seen is not None


def telemetry() -> Telemetry:
    row = TelemetrySource.objects.aggregate(first=Min("first_seen"), last=Max("last_seen"))
    return Telemetry(row["first"], row["last"])


def _chart(points: list[Point]) -> list[tuple[str, int, int]]:
    return [(p.label, p.calls, p.errors) for p in points]


@dataclass
class ToolHealth:
    telemetry: Telemetry
    day: Window
    week: Window
    hourly: list[Point]
    daily: list[Point]
    last_call: datetime | None
    executions: list[ToolExecution] = field(default_factory=list)

    @property
    def hourly_chart(self) -> list[tuple[str, int, int]]:
        return _chart(self.hourly)

    @property
    def daily_chart(self) -> list[tuple[str, int, int]]:
        return _chart(self.daily)


def _window(rows: Iterable[dict[str, Any]]) -> Window:
    rows = list(rows)
    counts = histogram.merged(r["duration_counts"] or [] for r in rows)
    return Window(
        calls=sum(r["calls"] for r in rows),
        errors=sum(r["errors"] for r in rows),
        retries=sum(r["retries"] for r in rows),
        p50_ms=histogram.quantile(counts, 0.5),
        p95_ms=histogram.quantile(counts, 0.95),
    )


def _bucketed(rows: list[dict[str, Any]], bounds: list[datetime]) -> list[list[dict[str, Any]]]:
    """The rows of each span [bounds[i], bounds[i + 1]); rows outside every span are left out."""
    out: list[list[dict[str, Any]]] = [[] for _ in bounds[:-1]]
    for row in rows:
        i = bisect_right(bounds, row["bucket"]) - 1
        if 0 <= i < len(out):
            out[i].append(row)
    return out


def _points(groups: list[list[dict[str, Any]]], starts: list[datetime], fmt: str) -> list[Point]:
    return [
        Point(
            start,
            date_format(timezone.localtime(start), fmt),
            sum(r["calls"] for r in rows),
            sum(r["errors"] for r in rows),
        )
        for start, rows in zip(starts, groups, strict=True)
    ]


def tool_health(tool_pk: int, now: datetime | None = None) -> ToolHealth:
    """One tool over 24 h and 7 d: four queries (rollups, recent executions, last call, telemetry)."""
    now = now or timezone.now()
    hours, days = _hour_bounds(now), _day_bounds(now)
    rows: list[dict[str, Any]] = [
        dict(row)
        for row in ToolUsage.objects.filter(tool_id=tool_pk, bucket__gte=min(hours[0], days[0])).values(
            "bucket", "calls", "errors", "retries", "duration_counts"
        )
    ]
    by_hour, by_day = _bucketed(rows, hours), _bucketed(rows, days)
    executions = list(ToolExecution.objects.filter(tool_id=tool_pk).order_by("-executed_at")[:RECENT_EXECUTIONS])
    last = ToolUsage.objects.filter(tool_id=tool_pk, calls__gt=0).aggregate(last=Max("bucket"))["last"]
    if executions and (last is None or executions[0].executed_at > last):
        last = executions[0].executed_at
    return ToolHealth(
        telemetry=telemetry(),
        day=_window(r for group in by_hour for r in group),
        week=_window(r for group in by_day for r in group),
        hourly=_points(by_hour, hours[:-1], "H:i"),
        daily=_points(by_day, days[:-1], "D j"),
        last_call=last,
        executions=executions,
    )


@dataclass(frozen=True)
class ToolFigures:
    tool: Tool
    calls_day: int
    errors_day: int
    calls_week: int
    errors_week: int
    last_call: datetime | None


@dataclass
class TeamHealth:
    telemetry: Telemetry
    tools: list[ToolFigures]  # the team's first `shown` live tools in the catalog's order (id, then system)
    dead: list[ToolFigures]  # the first `shown` live tools with no call in the last `dead_days` days
    dead_days: int
    # "dead": no call in `dead_days` days; "since-telemetry": telemetry began less than that ago, so the list
    # says "no call since telemetry began"; "no-telemetry": nothing was ever heard, so no tool is called dead.
    dead_mode: str
    dead_count: int = 0  # all of them, listed or not


# A team page lists this many tools' figures and dead tools; a team of thousands is browsed in the catalog.
TEAM_TOOLS_SHOWN = 100


def _sum(column: str, since: datetime) -> Sum:
    return Sum(f"usage__{column}", filter=Q(usage__bucket__gte=since), default=0)


def _figures(tools: QuerySet[Tool], now: datetime) -> list[ToolFigures]:
    """Calls and errors over 24 h and 7 d and the last call of `tools` (one query; only the names are read)."""
    day_since, week_since = _hour_bounds(now)[0], _day_bounds(now)[0]
    annotated = (
        Tool.objects.filter(pk__in=tools.values("pk"))
        .only("system", "declared_id")
        .annotate(
            calls_day=_sum("calls", day_since),
            errors_day=_sum("errors", day_since),
            calls_week=_sum("calls", week_since),
            errors_week=_sum("errors", week_since),
            last_call=Max("usage__bucket", filter=Q(usage__calls__gt=0)),
        )
        .order_by("declared_id", "system")
    )
    return [
        ToolFigures(t, t.calls_day, t.errors_day, t.calls_week, t.errors_week, t.last_call)  # type: ignore[attr-defined]
        for t in annotated
    ]


def team_health(team_pk: int, now: datetime | None = None, *, shown: int = TEAM_TOOLS_SHOWN) -> TeamHealth:
    """Calls and errors of the team's first `shown` live tools over 24 h and 7 d, and its dead tools (the first
    `shown` and how many): four queries, or one before any telemetry, whatever the team's size. Annotating every
    tool of a team of 4,500 took 445 ms of a team page that lists 100 of them."""
    now = now or timezone.now()
    heard = telemetry()
    days = dead_days()
    if not heard.active:
        return TeamHealth(telemetry=heard, tools=[], dead=[], dead_days=days, dead_mode="no-telemetry")
    cutoff = now - timedelta(days=days)
    # The catalog's order (its team page lists the same first tools), which tool_live_owner_idx holds.
    team_tools = Tool.objects.live().filter(owner_id=team_pk).order_by("declared_id", "system")
    dead = team_tools.filter(~called_recently(now))
    mode = "dead" if heard.first_seen is not None and heard.first_seen <= cutoff else "since-telemetry"
    return TeamHealth(
        telemetry=heard,
        tools=_figures(team_tools[:shown], now),
        dead=_figures(dead[:shown], now),
        dead_days=days,
        dead_mode=mode,
        dead_count=dead.count(),
    )


@dataclass(frozen=True)
class ErrorLeader:
    system: str
    declared_id: str
    calls: int
    errors: int


@dataclass
class DashboardHealth:
    telemetry: Telemetry
    day: Window
    hourly: list[Point]
    top_errors: list[ErrorLeader]
    open_unknown_names: int
    sources: list[TelemetrySource]

    @property
    def hourly_chart(self) -> list[tuple[str, int, int]]:
        return _chart(self.hourly)


def dashboard_health(now: datetime | None = None) -> DashboardHealth:
    """The last 24 h over every tool: four queries (per hour, top errors, open unknown names, sources)."""
    now = now or timezone.now()
    hours = _hour_bounds(now)[:-1]
    recent = ToolUsage.objects.filter(bucket__gte=hours[0])
    per_hour = {
        row["hour"]: row
        for row in recent.annotate(hour=TruncHour("bucket", tzinfo=UTC))
        .values("hour")
        .annotate(calls=Sum("calls"), errors=Sum("errors"))
        .order_by()
    }
    hourly = [
        Point(
            h,
            date_format(timezone.localtime(h), "H:i"),
            per_hour.get(h, {}).get("calls") or 0,
            per_hour.get(h, {}).get("errors") or 0,
        )
        for h in hours
    ]
    leaders = (
        recent.values("tool__system", "tool__declared_id")
        .annotate(calls=Sum("calls"), errors=Sum("errors"))
        .filter(errors__gt=0)
        .order_by("-errors", "tool__system", "tool__declared_id")[:TOP_ERRORS]
    )
    sources = list(TelemetrySource.objects.order_by("-last_seen", "service")[:SOURCES_SHOWN])
    first = min((s.first_seen for s in sources), default=None)
    last = max((s.last_seen for s in sources), default=None)
    return DashboardHealth(
        telemetry=Telemetry(first, last),
        day=Window(calls=sum(p.calls for p in hourly), errors=sum(p.errors for p in hourly)),
        hourly=hourly,
        top_errors=[ErrorLeader(r["tool__system"], r["tool__declared_id"], r["calls"], r["errors"]) for r in leaders],
        open_unknown_names=UnknownToolName.objects.filter(verdict=UnknownToolName.Verdict.OPEN).count(),
        sources=sources,
    )
