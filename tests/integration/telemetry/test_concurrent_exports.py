"""Runtimes exporting at the same moment, on real PostgreSQL: each its own OpenTelemetry SDK (provider, exporter,
connection), the live server handling each export in its own thread with its own database connection.

The ingest upserts one row per tool and minute (insert the missing ignoring conflicts, lock in key order, merge):
every span counts once, in one row, with no deadlock and no 500 (the SDK does not retry a 500, so a lost export shows
as a failed flush). More runtimes than the process's CONDOR_OTLP_MAX_CONCURRENT get a 429 with Retry-After, which
the SDK honours: they land too, a moment later."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from catalog.domain.rules.runtime import RETRIED_WRITE
from catalog.models import Finding, MutatingCall, TelemetrySource, ToolUsage
from catalog.usage.domain.spans import minute_of
from tests.conftest import requires_postgres

from .conftest import Runtime

pytestmark = [pytest.mark.postgres, requires_postgres]


def flush_at_once(runtimes: list[Runtime]) -> list[bool | Exception]:
    """Every runtime's buffered spans exported at the same instant, one thread each."""
    barrier = threading.Barrier(len(runtimes))
    results: list[bool | Exception] = [RuntimeError("never ran")] * len(runtimes)

    def client(i: int) -> None:
        try:
            barrier.wait()
            results[i] = runtimes[i].flush()
        except Exception as exc:  # reported by the caller's assertion
            results[i] = exc

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(runtimes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def test_runtimes_exporting_one_tools_minute_at_once_all_count_in_one_row(catalog: None, runtimes: Any) -> None:
    clients, spans = 6, 700  # 700 spans: two exports each at the SDK's default batch of 512
    minute = minute_of(timezone.now()) - timedelta(minutes=1)
    started = [runtimes(service=f"runtime-{i}") for i in range(clients)]
    for i, runtime in enumerate(started):
        for j in range(spans):
            at = minute + timedelta(seconds=i * 5, milliseconds=j)
            runtime.call_tool("listActiveMedications", at=at, ms=15.0 + j % 40, error_type="timeout" if j < i else "")
    results = flush_at_once(started)
    assert results == [True] * clients, [r.exporter.results for r in started]

    [row] = ToolUsage.objects.filter(tool__declared_id="listActiveMedications")
    assert (row.resolution, row.bucket) == ("m", minute)
    assert row.calls == clients * spans and sum(row.duration_counts) == clients * spans
    assert row.errors == sum(range(clients)) and row.error_types == {"timeout": sum(range(clients))}
    assert dict(TelemetrySource.objects.values_list("service", "spans")) == {
        f"runtime-{i}": spans for i in range(clients)
    }


@pytest.mark.parametrize("clients", [2, 4])
def test_concurrent_exports_of_one_write_call_make_one_retried_write_finding(
    catalog: None, runtimes: Any, clients: int
) -> None:
    started = [runtimes(service=f"runtime-{i}") for i in range(clients)]
    for runtime in started:
        runtime.call_tool("prescribeMedication", call_id="call-dup", profile="demo")
    assert flush_at_once(started) == [True] * clients

    assert MutatingCall.objects.get(tool_call_id="call-dup").executions == clients
    [finding] = Finding.objects.filter(rule=RETRIED_WRITE)
    # Each export after the first saw the call run again: one piece of evidence each, on the one finding.
    assert finding.details["occurrences"] == clients - 1
    assert f"ran {clients} times for tool call 'call-dup'" in finding.message
    assert ToolUsage.objects.get(tool__declared_id="prescribeMedication").calls == clients
