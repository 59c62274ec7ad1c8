"""Ingest one OTLP export: every execute_tool span becomes counts in its tool's minute, a sample of recent executions,
an unknown name, or a runtime finding; all of one request in one transaction.

Rows are written by upsert: the missing ones inserted first (ignoring conflicts, in key order), then all of them
locked in key order and merged, so two web processes ingesting the same tool's minute both count, and never
deadlock on each other. A request costs a fixed number of queries whatever its size (about twenty).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Window
from django.db.models.functions import Greatest, Least, RowNumber
from django.utils import timezone

from catalog.models import TelemetrySource, ToolExecution, ToolUsage
from catalog.usage.catalog_index import usage_index
from catalog.usage.domain import histogram
from catalog.usage.domain.rollup import Rollup, merge_error_types
from catalog.usage.domain.safety import ToolRef
from catalog.usage.domain.spans import Execution, RawSpan, minute_of, read_span
from catalog.usage.services.runtime_findings import record_runtime_findings
from catalog.usage.services.unknown_names import record_unknown_names
from catalog.usage.services.upsert import upsert

MAX_PROBLEMS = 20  # the partial-success message names the first problems; the count is always whole


@dataclass
class IngestResult:
    spans: int = 0  # spans in the request
    executions: int = 0  # execute_tool spans kept
    rejected: int = 0
    problems: list[str] = field(default_factory=list)
    unknown: int = 0  # executions of names that are no catalog tool
    dropped_actions: int = 0
    findings: int = 0  # runtime findings recorded or updated
    warnings: list[str] = field(default_factory=list)  # kept, but something was not (a full board)

    def message(self) -> str:
        """The OTLP partial-success `error_message`: what was refused and where (empty when nothing was)."""
        parts = []
        if self.rejected:
            shown = "; ".join(self.problems)
            more = self.rejected - len(self.problems)
            parts.append(f"{self.rejected} span(s) refused: {shown}" + (f"; and {more} more" if more > 0 else ""))
        return " | ".join(parts + self.warnings)


def retained_since(now: datetime) -> datetime:
    return now - timedelta(days=settings.CONDOR_USAGE_RETENTION_DAYS)


def usage_ingest(raw_spans: Iterable[RawSpan], *, now: datetime | None = None) -> IngestResult:
    """Read and store one export's spans. Refused spans are counted and named, never partly kept."""
    now = now or timezone.now()
    result = IngestResult()
    executions: list[Execution] = []
    dropped: list[tuple[str, str, str, datetime]] = []  # (action, service, agent, when)
    services: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # service → [kept, refused]
    earliest: dict[str, datetime] = {}  # service → its earliest execution here (telemetry began then, not now)
    for span in raw_spans:
        result.spans += 1
        reading = read_span(span, now=now, oldest=retained_since(now))
        service = str(span.resource.get("service.name") or "")[:200]
        if reading.problem:
            result.rejected += 1
            services[service][1] += 1
            if len(result.problems) < MAX_PROBLEMS:
                result.problems.append(reading.problem)
            continue
        if reading.dropped_action:
            dropped.append((reading.dropped_action, service, str(span.attributes.get("gen_ai.agent.name") or ""), now))
        if reading.execution is not None:
            executions.append(reading.execution)
            services[service][0] += 1
            earliest[service] = min(earliest.get(service, now), reading.execution.started_at)
    result.executions = len(executions)
    result.dropped_actions = len(dropped)
    if not (executions or dropped or services):
        return result
    index = usage_index()
    known: list[tuple[Execution, ToolRef]] = []
    unknown: list[Execution] = []
    for e in executions:
        ref = index.find(e.tool_name, e.system, clinical=index.is_clinical(e.profile))
        if ref is None:
            unknown.append(e)
        else:
            known.append((e, ref))
    result.unknown = len(unknown)
    with transaction.atomic():
        _bounded_lock_wait()
        _record_sources(services, earliest, now)
        _record_rollups(known)
        _record_samples(known)
        result.warnings += record_unknown_names(unknown, dropped)
        result.findings = record_runtime_findings(known, index=index, now=now)
    return result


def _bounded_lock_wait() -> None:
    """On PostgreSQL, this transaction waits at most CONDOR_OTLP_LOCK_TIMEOUT_MS for any lock; past that the
    database raises (an OperationalError), the transaction rolls back whole and the endpoint answers 503."""
    timeout = settings.CONDOR_OTLP_LOCK_TIMEOUT_MS
    if connection.vendor == "postgresql" and timeout > 0:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{timeout}ms"])


def _record_sources(services: dict[str, list[int]], earliest: dict[str, datetime], now: datetime) -> None:
    """Each service's counts; it was first seen at the earliest execution it reported (a backlog counts from then)."""
    named = {s: counts for s, counts in services.items() if s}
    if not named:
        return
    TelemetrySource.objects.bulk_create(
        [TelemetrySource(service=s, first_seen=earliest.get(s, now), last_seen=now) for s in sorted(named)],
        ignore_conflicts=True,
    )
    for service, (kept, refused) in sorted(named.items()):
        TelemetrySource.objects.filter(service=service).update(
            spans=F("spans") + kept,
            rejected=F("rejected") + refused,
            first_seen=Least(F("first_seen"), earliest.get(service, now)),
            last_seen=Greatest(F("last_seen"), now),
        )


FIELDS = ["calls", "errors", "retries", "duration_ms_sum", "error_types", "duration_counts"]


def add_rollup(stored: ToolUsage, new: ToolUsage) -> None:
    """`new`'s counts added to `stored` (the same tool and bucket)."""
    stored.calls += new.calls
    stored.errors += new.errors
    stored.retries += new.retries
    stored.duration_ms_sum += new.duration_ms_sum
    stored.error_types = merge_error_types(stored.error_types, new.error_types)
    stored.duration_counts = histogram.merged([stored.duration_counts, new.duration_counts])


def _record_rollups(known: list[tuple[Execution, ToolRef]]) -> None:
    minutes: dict[tuple[int, datetime], Rollup] = defaultdict(Rollup)
    for e, ref in known:
        minutes[(ref.pk, minute_of(e.started_at))].add(e)
    new = {
        (pk, bucket): ToolUsage(tool_id=pk, resolution=ToolUsage.Resolution.MINUTE, bucket=bucket, **vars(r))
        for (pk, bucket), r in minutes.items()
    }
    upsert(
        ToolUsage,
        new,
        existing=lambda: ToolUsage.objects.filter(
            resolution=ToolUsage.Resolution.MINUTE, tool_id__in={k[0] for k in new}, bucket__in={k[1] for k in new}
        ),
        key=lambda row: (row.tool_id, row.bucket),
        merge=add_rollup,
        fields=FIELDS,
    )


def _record_samples(known: list[tuple[Execution, ToolRef]]) -> None:
    """The newest executions per tool: this batch's newest inserted, then each touched tool cut back to its bound."""
    keep = settings.CONDOR_USAGE_SAMPLES_PER_TOOL
    newest: dict[int, list[tuple[Execution, ToolRef]]] = defaultdict(list)
    for e, ref in sorted(known, key=lambda pair: pair[0].started_at, reverse=True):
        if len(newest[ref.pk]) < keep:
            newest[ref.pk].append((e, ref))
    if not newest:
        return
    ToolExecution.objects.bulk_create([_sample(e, ref) for rows in newest.values() for e, ref in rows], batch_size=500)
    ranked = ToolExecution.objects.filter(tool_id__in=list(newest)).annotate(
        rank=Window(RowNumber(), partition_by=[F("tool_id")], order_by=[F("executed_at").desc(), F("pk").desc()])
    )
    excess = [pk for pk in ranked.filter(rank__gt=keep).values_list("pk", flat=True)]
    if excess:
        ToolExecution.objects.filter(pk__in=excess).delete()


def _sample(e: Execution, ref: ToolRef) -> ToolExecution:
    return ToolExecution(
        tool_id=ref.pk,
        executed_at=e.started_at,
        duration_ms=e.duration_ms,
        error_type=e.error_type,
        tool_call_id=e.tool_call_id,
        called_name=e.tool_name,
        trace_id=e.trace_id,
        span_id=e.span_id,
        service=e.service,
        agent=e.agent,
        profile=e.profile,
        attempt=e.attempt,
        candidate_set_id=e.candidate_set_id,
        approval_id=e.approval_id,
        stamped=e.stamped,
    )
