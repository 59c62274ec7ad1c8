"""POST /api/v1/otlp/v1/traces as an OTLP exporter uses it: protobuf and JSON, gzip, refusals that store nothing."""

from __future__ import annotations

import gzip
import threading
import time
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test import Client
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from catalog.models import TelemetrySource, ToolExecution, ToolUsage, UnknownToolName
from catalog.services.imports import catalog_import
from tests.catalog.usage.spans import as_json, as_protobuf, export, tool_span
from tests.conftest import condor_manifest, encode, requires_postgres

URL = "/api/v1/otlp/v1/traces"
PB = "application/x-protobuf"


@pytest.fixture
def catalog(db: Any) -> None:
    catalog_import(raw=encode(condor_manifest()), via="test")


@pytest.fixture
def token(make_token: Any) -> str:
    return make_token("runtime-telemetry", scopes=("telemetry",))


def post(client: Client, token: str, body: bytes, content_type: str = PB, **headers: str) -> Any:
    return client.post(URL, body, content_type=content_type, headers={"Authorization": f"Bearer {token}", **headers})


def stored() -> tuple[int, int, int]:
    return ToolUsage.objects.count(), ToolExecution.objects.count(), UnknownToolName.objects.count()


def test_a_protobuf_export_is_counted_per_tool_and_answered_in_protobuf(client: Client, catalog: None, token: str):
    # Both in one minute (usage is rolled up per minute): spans stamped "now" apart can straddle a minute's end.
    minute = time.time_ns() // 60_000_000_000 * 60_000_000_000 - 60_000_000_000
    spans = [
        tool_span("listActiveMedications", ms=30, start_ns=minute + 1_000_000_000),
        tool_span("list_active_medications", ms=70, error="timeout", start_ns=minute + 2_000_000_000),
    ]
    response = post(client, token, as_protobuf(export(spans)))
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == PB
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert not answer.HasField("partial_success")
    usage = ToolUsage.objects.get()
    assert (usage.tool.declared_id, usage.calls, usage.errors, usage.error_types) == (
        "listActiveMedications",
        2,
        1,
        {"timeout": 1},
    )
    assert sum(usage.duration_counts) == 2 and usage.duration_ms_sum == pytest.approx(100, abs=0.01)
    assert ToolExecution.objects.count() == 2
    assert TelemetrySource.objects.get().spans == 2


def test_json_and_gzip_bodies_count_the_same(client: Client, catalog: None, token: str):
    body = as_json(export([tool_span("prescribeMedication", call_id="c1")]))
    assert post(client, token, body, "application/json").status_code == 200
    response = post(
        client,
        token,
        gzip.compress(as_protobuf(export([tool_span("prescribeMedication")]))),
        **{"Content-Encoding": "gzip"},
    )
    assert response.status_code == 200, response.content
    assert ToolUsage.objects.get().calls == 2


def test_json_answers_partial_success_naming_each_refused_span(client: Client, catalog: None, token: str):
    spans = [tool_span("listActiveMedications"), tool_span(""), tool_span("x", ms=5, condor__retry__attempt=0)]
    response = post(client, token, as_json(export(spans)), "application/json")
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2"  # int64 in OTLP/JSON is a string
    assert "spans[1]: an execute_tool span without gen_ai.tool.name" in partial["errorMessage"]
    assert "spans[2]: condor.retry.attempt must be an integer from 1" in partial["errorMessage"]
    assert ToolUsage.objects.get().calls == 1
    assert TelemetrySource.objects.get().rejected == 2


@pytest.mark.parametrize(
    ("body", "content_type", "headers", "said"),
    [
        (b"\x0a\xff\xff", PB, {}, "not a protobuf ExportTraceServiceRequest"),
        (b"{not json", "application/json", {}, "not JSON"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}', "application/json", {}, "not hex"),
        (b"\x1f\x8b plain", PB, {"Content-Encoding": "gzip"}, "not valid gzip"),
        (b"abc", PB, {"Content-Encoding": "br"}, "Content-Encoding 'br' is not supported"),
    ],
)
def test_a_malformed_body_is_a_400_that_says_what_and_stores_nothing(
    client: Client, catalog: None, token: str, body: bytes, content_type: str, headers: dict[str, str], said: str
):
    response = post(client, token, body, content_type, **headers)
    assert response.status_code == 400
    text = response.content.decode("utf-8", "replace")
    assert said in text and "nothing was stored" in text
    if content_type == "application/json":
        assert response.json()["code"] == 3 and response.json()["detail"] == response.json()["message"]
    assert stored() == (0, 0, 0)


def test_a_gzip_bomb_is_refused_without_inflating_it(client: Client, catalog: None, token: str, settings: Any):
    settings.CONDOR_OTLP_MAX_INFLATED_BYTES = 1024
    response = post(client, token, gzip.compress(b"\0" * 10_000_000), **{"Content-Encoding": "gzip"})
    assert response.status_code == 400 and b"inflates to more than 1024 bytes" in response.content


def test_another_content_type_is_a_415(client: Client, catalog: None, token: str):
    response = post(client, token, b"hello", "text/plain")
    assert response.status_code == 415 and "application/x-protobuf" in response.json()["detail"]


def test_too_many_spans_is_a_413_and_stores_nothing(client: Client, catalog: None, token: str, settings: Any):
    settings.CONDOR_OTLP_MAX_SPANS = 2
    response = post(client, token, as_protobuf(export([tool_span("prescribeMedication")] * 3)))
    assert response.status_code == 413 and stored() == (0, 0, 0)


def test_a_token_without_the_telemetry_scope_is_a_403(client: Client, catalog: None, make_token: Any):
    other = make_token("reader", scopes=("catalog:read",))
    response = post(client, other, as_protobuf(export([tool_span("prescribeMedication")])))
    assert response.status_code == 403 and "telemetry" in response.json()["detail"]
    assert post(client, "nope", b"").status_code == 401
    assert stored() == (0, 0, 0)


def test_unknown_names_land_on_the_board_with_service_and_agent(client: Client, catalog: None, token: str):
    spans = [tool_span("get_clinical_notes", gen_ai__agent__name="clinical") for _ in range(3)]
    spans.append(tool_span("showModal", condor__ui__dropped_action="open_panel"))
    assert post(client, token, as_protobuf(export(spans, service="tucan-api"))).status_code == 200
    names = {(n.name, n.source): n for n in UnknownToolName.objects.all()}
    hallucinated = names[("get_clinical_notes", "call")]
    assert (hallucinated.calls, hallucinated.services, hallucinated.agents) == (3, ["tucan-api"], ["clinical"])
    assert names[("open_panel", "ui")].calls == 1
    assert names[("showModal", "call")].calls == 1  # no such tool in this catalog either


def test_an_ingest_costs_the_same_queries_for_ten_or_a_thousand_spans(
    client: Client, catalog: None, token: str, django_assert_max_num_queries: Any
):
    post(client, token, as_protobuf(export([tool_span("listActiveMedications")])))  # the index is built once
    for n in (10, 1000):
        spans = [
            tool_span(
                "listActiveMedications" if i % 3 else "prescribeMedication", call_id=f"c{n}-{i}", condor__profile="demo"
            )
            for i in range(n)
        ]
        with django_assert_max_num_queries(30):
            assert post(client, token, as_protobuf(export(spans))).status_code == 200
    assert sum(ToolUsage.objects.values_list("calls", flat=True)) == 1011
    assert ToolExecution.objects.count() == 40  # the newest 20 kept per tool


def test_a_process_at_its_share_sheds_with_429_and_retry_after(client: Client, catalog: None, token: str):
    from catalog.usage import otlp_api

    taken = [otlp_api._in_flight.acquire(blocking=False) for _ in range(50)]
    try:
        response = post(client, token, as_protobuf(export([tool_span("prescribeMedication")])))
    finally:
        for held in taken:
            if held:
                otlp_api._in_flight.release()
    assert response.status_code == 429 and response["Retry-After"] == "2"
    assert stored() == (0, 0, 0)
    assert post(client, token, as_protobuf(export([tool_span("prescribeMedication")]))).status_code == 200


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_an_export_behind_a_held_lock_is_a_503_in_its_encoding_that_stores_nothing_then_a_retry_counts_once(
    client: Client, catalog: None, token: str, settings: Any
):
    """A migration or a long compaction holds a table lock: the export waits CONDOR_OTLP_LOCK_TIMEOUT_MS, not
    forever, and is answered 503 + Retry-After with a google.rpc.Status an exporter reads; the exporter's retry
    after the lock is gone is counted, once."""
    settings.CONDOR_OTLP_LOCK_TIMEOUT_MS = 300
    body = as_protobuf(export([tool_span("prescribeMedication")], service="ward-runtime"))
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {TelemetrySource._meta.db_table} IN ACCESS EXCLUSIVE MODE")
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        refused = post(client, token, body)
        waited = time.monotonic() - started
    finally:
        release.set()
        holder.join(30)
    assert refused.status_code == 503, refused.content
    assert refused["Retry-After"] == str(settings.CONDOR_OTLP_RETRY_AFTER_SECONDS)
    assert refused["Content-Type"] == PB
    status = Status.FromString(refused.content)
    assert status.code == 14 and "nothing was stored" in status.message
    assert 0.25 < waited < 5, waited
    assert stored() == (0, 0, 0) and not TelemetrySource.objects.exists()

    assert post(client, token, body).status_code == 200
    assert ToolExecution.objects.count() == 1 and TelemetrySource.objects.get().spans == 1
