"""Benchmark: OTLP trace ingestion (POST /api/v1/otlp/v1/traces) against storing every call, 500 to 50,000 tools.

Bodies are what a runtime's OpenTelemetry SDK sends: `execute_tool` spans made by the SDK's own tracer (GenAI
attributes, `condor.profile`, the stamps of the tool's declaration, a tool call id; 8 calls per trace) and encoded by
the SDK's own OTLP encoder (`opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans`), protobuf, in
batches of 1,000 spans and of 512 (the SDK's default `max_export_batch_size`). The tools are called Zipf-like
(s = 1.1 over a shuffled ranking: a few tools take most calls); 2% of the calls name a hallucinated tool, 3% fail,
1% are retries; 10% spell the tool's id snake_case. A body's spans started in the 10 s before it is sent (a
runtime making 100 tool calls a second).

Per catalog size, on a fresh database (the generated manifest of bench/import_catalog.py, signed off), interleaved
request by request so machine noise hits every case alike, median and p99 ms per request of
  - the endpoint: the whole request through Django's test Client, in-process (middleware, bearer auth, ninja,
    decode, ingest, answer; no network);
  - the ingest service alone: protobuf decode + `usage_ingest` of the same body;
  - the baseline, "what storing every call would cost": protobuf decode of the same body + one `bulk_create` of one
    row per span into a plain indexed table (`bench_span_row`), in one transaction;
and spans/s per web process (one process ingesting one request at a time: spans / mean request time).

Then a simulated day: `--day-calls` tool calls (1,000,000) over the `--day-tools` catalog (5,000), in batches of
1,000 whose start times walk through the 24 h before now, each batch posted to the endpoint and stored by the
baseline side by side; the rows and bytes of every usage table after the day, and after the beat's compaction
(`usage_compact` with a `now` 49 h later: minutes fold into hours, the tool call ids' window ends) against the
baseline's table of one row per call. Bytes: PostgreSQL's pg_total_relation_size (after VACUUM FULL) or SQLite's
dbstat (after VACUUM).

Uses DATABASE_URL when set (e.g. PostgreSQL), else a throw-away SQLite file.

    .venv/bin/python bench/otlp_ingest.py [--sizes 500,5000,50000] [--requests 100] [--day-calls 1000000]
        [--day-tools 5000] [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _django import setup_django  # noqa: E402

URL = "/api/v1/otlp/v1/traces"
PB = "application/x-protobuf"
SEED = 22
ZIPF_S = 1.1
CALLS_PER_TRACE = 8
HALLUCINATED = [f"get_clinical_notes_v{i}" for i in range(20)] + [f"fetchPatientChart{i}" for i in range(20)]
WINDOW = timedelta(seconds=10)  # a 1,000-span export of a runtime making 100 calls/s
USAGE_TABLES = ("ToolUsage", "ToolExecution", "MutatingCall", "UnknownToolName", "TelemetrySource")


# --- the runtime's side: spans made and encoded by the OpenTelemetry SDK ----------------------------------------


class Traffic:
    """Tool calls as a runtime makes them, over one catalog, through the SDK's tracer and encoder."""

    def __init__(self, tools: list[dict[str, Any]], service: str = "mastra-runtime") -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.random = random.Random(SEED)
        ranked = list(tools)
        self.random.shuffle(ranked)
        self.tools = ranked
        weights = [1 / (rank + 1) ** ZIPF_S for rank in range(len(ranked))]
        total, running = sum(weights), 0.0
        self.cumulative = []
        for w in weights:
            running += w / total
            self.cumulative.append(running)
        self.memory = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.tracer = self.provider.get_tracer("bench.agent", "1.0")
        self.calls = 0

    def _attributes(self) -> dict[str, Any]:
        self.calls += 1
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.agent.name": "clinical",
            "gen_ai.tool.call.id": f"call_{self.calls:012d}",
            "condor.profile": "clinical-production",
        }
        r = self.random.random()
        if r < 0.02:
            attributes["gen_ai.tool.name"] = self.random.choice(HALLUCINATED)
            return attributes
        tool = self.random.choices(self.tools, cum_weights=self.cumulative)[0]
        attributes["gen_ai.tool.name"] = tool["snake"] if r > 0.9 else tool["id"]
        attributes["condor.policy_class"] = tool["policyClass"]
        attributes["condor.retry_class"] = tool["retryClass"]
        if tool["hitlTier"]:
            attributes["condor.hitl_tier"] = tool["hitlTier"]
        if self.random.random() < 0.03:
            attributes["error.type"] = self.random.choice(["timeout", "upstream_5xx", "validation"])
        if self.random.random() < 0.01:
            attributes["condor.retry.attempt"] = 2
        return attributes

    def body(self, n: int, since: datetime, until: datetime) -> bytes:
        """One export of `n` execute_tool spans starting between `since` and `until`, in time order."""
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

        start_ns, width = int(since.timestamp() * 1e9), int((until - since).total_seconds() * 1e9)
        starts = sorted(start_ns + self.random.randrange(max(width, 1)) for _ in range(n))
        parent = None
        for i, start in enumerate(starts):
            if i % CALLS_PER_TRACE == 0:  # the run's invoke_agent span lives in the runtime's own export
                context = SpanContext(
                    self.random.getrandbits(128), self.random.getrandbits(64), False, TraceFlags(TraceFlags.SAMPLED)
                )
                parent = trace.set_span_in_context(NonRecordingSpan(context))
            attributes = self._attributes()
            span = self.tracer.start_span(
                f"execute_tool {attributes['gen_ai.tool.name']}",
                context=parent,
                attributes=attributes,
                start_time=start,
            )
            if "error.type" in attributes:
                span.set_status(Status(StatusCode.ERROR, attributes["error.type"]))
            span.end(end_time=start + int(self.random.lognormvariate(3.3, 0.9) * 1e6))  # median ≈ 27 ms
        spans = self.memory.get_finished_spans()
        self.memory.clear()
        return bytes(encode_spans(spans).SerializeToString())


# --- the baseline: one plain row per call ---------------------------------------------------------------------


def baseline_model() -> Any:
    """A plain table of one row per call, as a per-call store would keep it (indexed by tool and time)."""
    from django.db import connection, models

    class SpanRow(models.Model):
        tool_name = models.CharField(max_length=200)
        started_at = models.DateTimeField()
        duration_ms = models.FloatField()
        error_type = models.CharField(max_length=200, blank=True)
        tool_call_id = models.CharField(max_length=200, blank=True)
        trace_id = models.CharField(max_length=32)
        span_id = models.CharField(max_length=16)
        service = models.CharField(max_length=200, blank=True)
        agent = models.CharField(max_length=200, blank=True)
        profile = models.CharField(max_length=100, blank=True)

        class Meta:
            app_label = "catalog"
            db_table = "bench_span_row"
            indexes = [models.Index(fields=["tool_name", "started_at"], name="bench_span_row_tool_idx")]

        def __str__(self) -> str:
            return f"{self.tool_name} at {self.started_at}"

    with connection.schema_editor() as editor:
        editor.create_model(SpanRow)
    return SpanRow


def baseline_store(model: Any, body: bytes) -> int:
    from django.db import transaction

    from catalog.usage import otlp

    rows = []
    for span in otlp.spans(otlp.decode(body, otlp.PROTOBUF)):
        a = span.attributes
        rows.append(
            model(
                tool_name=str(a.get("gen_ai.tool.name", ""))[:200],
                started_at=datetime.fromtimestamp(span.start_ns / 1e9, tz=UTC),
                duration_ms=(span.end_ns - span.start_ns) / 1e6,
                error_type=str(a.get("error.type", "")),
                tool_call_id=str(a.get("gen_ai.tool.call.id", "")),
                trace_id=span.trace_id,
                span_id=span.span_id,
                service=str(span.resource.get("service.name", "")),
                agent=str(a.get("gen_ai.agent.name", "")),
                profile=str(a.get("condor.profile", "")),
            )
        )
    with transaction.atomic():
        model.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


# --- ours -------------------------------------------------------------------------------------------------------


class Endpoint:
    def __init__(self) -> None:
        from django.test import Client

        from catalog.models import ApiToken

        raw = ApiToken.generate()
        ApiToken.objects.create(name="bench", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=["telemetry"])
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {raw}"}

    def post(self, body: bytes) -> None:
        response = self.client.post(URL, body, content_type=PB, headers=self.headers)
        assert response.status_code == 200, response.content[:500]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        answer = ExportTraceServiceResponse.FromString(response.content)
        assert answer.partial_success.rejected_spans == 0, answer.partial_success.error_message


def service_ingest(body: bytes) -> None:
    from catalog.usage import otlp
    from catalog.usage.services.ingest import usage_ingest

    result = usage_ingest(list(otlp.spans(otlp.decode(body, otlp.PROTOBUF))))
    assert result.rejected == 0, result.message()


# --- set-up -----------------------------------------------------------------------------------------------------


def fresh_catalog(n: int) -> list[dict[str, Any]]:
    """A fresh database holding the generated catalog of `n` tools, signed off; returns its tools."""
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection
    from import_catalog import make_manifest

    from catalog.core import roles
    from catalog.domain.keys import canonical_key
    from catalog.services.imports import catalog_import
    from catalog.services.signoff import revision_review
    from catalog.usage import catalog_index

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # this throw-away database only, as bench/governance.py does
            cursor.execute("SET condor.allow_audit_truncate = 'on'")
    call_command("flush", verbosity=0, interactive=False)
    call_command("migrate", verbosity=0)
    catalog_index.forget()
    manifest = make_manifest(n)
    revision = catalog_import(raw=json.dumps(manifest).encode(), via="bench").revision
    group = Group.objects.get_or_create(name=roles.SAFETY_OFFICER)[0]
    for i in range(2):
        officer = User.objects.create(username=f"officer{i}")
        officer.groups.add(group)
        revision_review(revision_id=revision.pk, reviewer=officer, decision="approved", comment="bench")
    tools = manifest["tools"]
    for tool in tools:
        tool["snake"] = canonical_key(tool["id"]).replace(".", "_")
    return list(tools)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(samples: list[float], spans: int) -> dict[str, float]:
    return {
        "median_ms": statistics.median(samples) * 1000,
        "p99_ms": percentile(samples, 0.99) * 1000,
        "spans_per_s": spans / statistics.mean(samples),
    }


# --- phase 1: request latency per catalog size ------------------------------------------------------------------


def measure_size(n: int, requests: int, model: Any) -> dict[str, Any]:
    from django.utils import timezone

    tools = fresh_catalog(n)
    traffic = Traffic(tools)
    endpoint = Endpoint()

    def recent() -> tuple[datetime, datetime]:
        now = timezone.now()
        return now - WINDOW, now

    for _ in range(3):  # the ingest's catalog index, this minute's first rows
        endpoint.post(traffic.body(1000, *recent()))
    cases: dict[str, list[float]] = {"endpoint, 1,000": [], "endpoint, 512": [], "service, 1,000": []}
    cases["baseline, 1,000"] = []
    sizes = {"endpoint, 1,000": 1000, "endpoint, 512": 512, "service, 1,000": 1000, "baseline, 1,000": 1000}
    wire: list[int] = []
    for _ in range(requests):
        bodies = {name: traffic.body(sizes[name], *recent()) for name in cases}
        wire.append(len(bodies["endpoint, 1,000"]))
        run = {
            "endpoint, 1,000": lambda b: endpoint.post(b),
            "endpoint, 512": lambda b: endpoint.post(b),
            "service, 1,000": service_ingest,
            "baseline, 1,000": lambda b: baseline_store(model, b),
        }
        for name in cases:
            start = time.perf_counter()
            run[name](bodies[name])
            cases[name].append(time.perf_counter() - start)
    out = {name: summary(samples, sizes[name]) for name, samples in cases.items()}
    out["body_bytes_1000"] = statistics.median(wire)
    return out


# --- phase 2: a day --------------------------------------------------------------------------------------------


def table_sizes(models: dict[str, Any], vacuum: bool) -> dict[str, tuple[int, int]]:
    """(rows, bytes) per table, indexes and TOAST included."""
    from django.db import connection

    tables = {name: model._meta.db_table for name, model in models.items()}
    if vacuum:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                for table in tables.values():
                    cursor.execute(f'VACUUM FULL ANALYZE "{table}"')
            else:
                cursor.execute("VACUUM")
    out = {}
    with connection.cursor() as cursor:
        for name, table in tables.items():
            rows = models[name].objects.count()
            if connection.vendor == "postgresql":
                cursor.execute("SELECT pg_total_relation_size(%s)", [table])
            else:
                cursor.execute(
                    "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name = %s OR name IN "
                    "(SELECT name FROM sqlite_master WHERE tbl_name = %s AND type = 'index')",
                    [table, table],
                )
            out[name] = (rows, int(cursor.fetchone()[0]))
    return out


def simulate_day(calls: int, n_tools: int, model: Any) -> dict[str, Any]:
    from django.db import connection
    from django.utils import timezone

    import catalog.models as catalog_models
    from catalog.domain.rules.runtime import RUNTIME_RULES
    from catalog.usage.services.retention import usage_compact

    tools = fresh_catalog(n_tools)
    traffic = Traffic(tools)
    endpoint = Endpoint()
    now = timezone.now()
    batches = max(1, calls // 1000)
    step = timedelta(hours=24) / batches
    day_start = now - timedelta(hours=24)
    ours_s = base_s = build_s = 0.0
    for k in range(batches):
        t0 = time.perf_counter()
        body = traffic.body(1000, day_start + step * k, day_start + step * (k + 1))
        t1 = time.perf_counter()
        endpoint.post(body)
        t2 = time.perf_counter()
        baseline_store(model, body)
        t3 = time.perf_counter()
        build_s, ours_s, base_s = build_s + t1 - t0, ours_s + t2 - t1, base_s + t3 - t2
        if (k + 1) % max(1, batches // 10) == 0:
            print(f"  day: {k + 1}/{batches} batches, ours {ours_s:.0f} s, baseline {base_s:.0f} s", flush=True)
    measured = {name: getattr(catalog_models, name) for name in USAGE_TABLES} | {"baseline (per call)": model}
    after_day = table_sizes(measured, vacuum=connection.vendor == "postgresql")
    findings = catalog_models.Finding.objects.filter(rule__in=RUNTIME_RULES).count()
    t0 = time.perf_counter()
    done = usage_compact(now=now + timedelta(hours=49))
    compact_s = time.perf_counter() - t0
    after_compaction = table_sizes(measured, vacuum=True)
    return {
        "calls": batches * 1000,
        "tools": n_tools,
        "ingest_s": ours_s,
        "baseline_s": base_s,
        "build_s": build_s,
        "compact_s": compact_s,
        "compacted_hours": done.hours,
        "folded_minute_rows": done.minute_rows,
        "dropped_rows": done.dropped,
        "runtime_findings": findings,
        "after_day": after_day,
        "after_compaction": after_compaction,
    }


# --- report -----------------------------------------------------------------------------------------------------


def print_size(n: int, figures: dict[str, Any]) -> None:
    base = figures["baseline, 1,000"]["median_ms"]
    print(f"\n{n} tools (a 1,000-span body is {figures['body_bytes_1000'] / 1024:.0f} KiB of protobuf)")
    print(f"{'case':<18} {'median ms':>10} {'p99 ms':>8} {'spans/s':>9} {'/ baseline':>11}")
    for name, row in figures.items():
        if isinstance(row, dict):
            ratio = f"{row['median_ms'] / base:.2f}x" if name.endswith("1,000") else "-"
            print(f"{name:<18} {row['median_ms']:>10.1f} {row['p99_ms']:>8.1f} {row['spans_per_s']:>9.0f} {ratio:>11}")


def print_day(day: dict[str, Any]) -> None:
    per_batch = 1000 * day["ingest_s"] / (day["calls"] / 1000)
    base_batch = 1000 * day["baseline_s"] / (day["calls"] / 1000)
    print(f"\na day of {day['calls']:,} calls over {day['tools']:,} tools")
    print(
        f"ingest {day['ingest_s']:.0f} s ({per_batch:.1f} ms per 1,000), baseline {day['baseline_s']:.0f} s "
        f"({base_batch:.1f} ms per 1,000); SDK build+encode {day['build_s']:.0f} s (not counted)"
    )
    print(
        f"compaction at +49 h: {day['compact_s']:.1f} s, {day['compacted_hours']} hours from "
        f"{day['folded_minute_rows']:,} minute rows, {day['dropped_rows']:,} rows past their window dropped; "
        f"runtime findings: {day['runtime_findings']}"
    )
    print(f"{'table':<22} {'rows after day':>15} {'MiB':>8} {'rows at +49 h':>14} {'MiB':>8}")
    ours_day = ours_late = 0
    for name, (rows, size) in day["after_day"].items():
        late_rows, late_size = day["after_compaction"][name]
        print(f"{name:<22} {rows:>15,} {size / 2**20:>8.2f} {late_rows:>14,} {late_size / 2**20:>8.2f}")
        if not name.startswith("baseline"):
            ours_day, ours_late = ours_day + size, ours_late + late_size
    base = day["after_day"]["baseline (per call)"][1]
    print(
        f"{'ours, all tables':<22} {'':>15} {ours_day / 2**20:>8.2f} {'':>14} {ours_late / 2**20:>8.2f}   "
        f"(baseline / ours: {base / max(ours_day, 1):.1f}x after the day, {base / max(ours_late, 1):.0f}x at +49 h)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="500,5000,50000")
    parser.add_argument("--requests", type=int, default=100, help="requests per case and size")
    parser.add_argument("--day-calls", type=int, default=1_000_000)
    parser.add_argument("--day-tools", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="500 and 5,000 tools, 20 requests, a day of 50,000")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.requests, args.day_calls = "500,5000", 20, 50_000
    setup_django()
    logging.getLogger("condor.import").setLevel(logging.WARNING)
    logging.getLogger("catalog").setLevel(logging.WARNING)  # "embedding batch …": queued, never run here
    from django.conf import settings
    from django.db import connection

    from condor_admin.celery import app

    settings.ALLOWED_HOSTS = ["*"]
    app.conf.task_always_eager = False  # the import's embedding is queued in memory, never run here
    model = baseline_model()
    print(
        f"OTLP ingest benchmark: {platform.python_implementation()} {platform.python_version()}, database "
        f"{connection.vendor}; Django's test Client in-process (no network); medians and p99 of {args.requests} "
        "requests per case"
    )
    results: dict[str, Any] = {"database": connection.vendor, "requests": args.requests, "sizes": {}}
    for n in (int(s) for s in args.sizes.split(",")):
        results["sizes"][n] = measure_size(n, args.requests, model)
        print_size(n, results["sizes"][n])
    results["day"] = simulate_day(args.day_calls, args.day_tools, model)
    print_day(results["day"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
