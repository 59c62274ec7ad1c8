"""The runtime's side of the telemetry tests: the real OpenTelemetry Python SDK, set up as an agent framework sets it
up (a TracerProvider with its `service.name`, the OTLP/HTTP protobuf exporter, a batch span processor), exporting to
pytest-django's live server; and the console's own APIs, read over HTTP as a service reads them."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import pytest
import requests
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode, format_trace_id

from catalog.usage import catalog_index
from tests.conftest import (
    condor_manifest,
    condor_tool,
    encode,
    mutate_tool,
    signed_import,
    tasks_in_process,
    tucan_manifest,
    tucan_tool,
)

OTLP_PATH = "/api/v1/otlp/v1/traces"


class RecordingExporter(OTLPSpanExporter):
    """The SDK's own OTLP/HTTP exporter; it only remembers what each export returned (the processors drop it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.results: list[SpanExportResult] = []
        self.spans_sent = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = super().export(spans)
        self.results.append(result)
        self.spans_sent += len(spans)
        return result


class Runtime:
    """One agent runtime's tracing: `call_tool` makes the `execute_tool` span a framework makes around a tool call
    (GenAI semantic conventions, plus the `condor.*` attributes the runtime stamps), under an `invoke_agent` span
    while `run()` is open; `flush()` exports what is buffered and says whether every export succeeded."""

    def __init__(
        self, base_url: str, token: str, *, service: str = "mastra-runtime", compression: Compression | None = None
    ) -> None:
        self.exporter = RecordingExporter(
            endpoint=base_url + OTLP_PATH,
            headers={"Authorization": f"Bearer {token}"},
            compression=compression,
            timeout=60,
        )
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}))
        # The SDK's default batch (512 spans), never sent on its own timer here: flush() sends it.
        self.provider.add_span_processor(
            BatchSpanProcessor(self.exporter, max_queue_size=20_000, schedule_delay_millis=600_000)
        )
        self.tracer = self.provider.get_tracer("condor.tests.agent", "1.0")

    @contextmanager
    def run(self, agent: str = "clinical") -> Iterator[None]:
        """An agent run: a non-tool span the console accepts and ignores, parent of the tool spans inside it."""
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
        with self.tracer.start_as_current_span(f"invoke_agent {agent}", attributes=attributes):
            yield

    def call_tool(
        self,
        name: str,
        *,
        call_id: str = "",
        ms: float = 20.0,
        error_type: str = "",
        raises: BaseException | None = None,
        at: datetime | None = None,
        agent: str = "",
        **condor: Any,
    ) -> str:
        """One tool execution of `ms` milliseconds, ending now (or starting `at`). `error_type` sets `error.type`
        and status ERROR; `raises` is an exception the tool raised, recorded the SDK's way (event and status only,
        no `error.type`). `condor` adds `condor.<key>` attributes, `__` spelling a dot (`retry__attempt`).
        Returns the span's trace id, in hex as the console shows it."""
        start = int(at.timestamp() * 1e9) if at is not None else time.time_ns() - int(ms * 1e6)
        attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        if call_id:
            attributes["gen_ai.tool.call.id"] = call_id
        if agent:
            attributes["gen_ai.agent.name"] = agent
        attributes.update({"condor." + key.replace("__", "."): value for key, value in condor.items()})
        with self.tracer.start_as_current_span(
            f"execute_tool {name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start,
            end_on_exit=False,
        ) as span:
            if error_type:
                span.set_attribute("error.type", error_type)
                span.set_status(Status(StatusCode.ERROR, error_type))
            if raises is not None:
                span.record_exception(raises)
                span.set_status(Status(StatusCode.ERROR, str(raises)))
            span.end(end_time=start + int(ms * 1e6))
            return format_trace_id(span.get_span_context().trace_id)

    def flush(self) -> bool:
        """Export everything buffered; True when the processor drained and every export succeeded."""
        drained = self.provider.force_flush(60_000)
        return drained and all(r == SpanExportResult.SUCCESS for r in self.exporter.results)

    def shutdown(self) -> None:
        self.provider.shutdown()


@pytest.fixture(autouse=True)
def _fresh_indexes() -> Iterator[None]:
    """Each test flushes the database and builds its catalog anew: no index of a previous catalog is kept."""
    from approvals.catalog_index import forget

    catalog_index.forget()
    forget()
    with tasks_in_process():
        yield
    catalog_index.forget()
    forget()


@pytest.fixture
def runtimes(live_server: Any, make_token: Any) -> Iterator[Any]:
    """Start runtimes exporting to the live server with a `telemetry` token: `runtimes(service=…, compression=…)`."""
    token = make_token("runtime-telemetry", scopes=("telemetry",))
    started: list[Runtime] = []

    def start(**kwargs: Any) -> Runtime:
        runtime = Runtime(live_server.url, token, **kwargs)
        started.append(runtime)
        return runtime

    yield start
    for runtime in started:
        runtime.shutdown()


class Console:
    """The console's JSON API over HTTP, as another service calls it."""

    def __init__(self, base_url: str, tokens: dict[str, str]) -> None:
        self.base_url = base_url
        self.tokens = tokens

    def _headers(self, scope: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[scope]}"}

    def get(self, path: str, scope: str = "catalog:read", **params: Any) -> Any:
        response = requests.get(self.base_url + path, params=params, headers=self._headers(scope), timeout=60)
        assert response.status_code == 200, response.text
        return response.json()

    def post(self, path: str, body: dict[str, Any], scope: str, expect: int = 200) -> Any:
        response = requests.post(self.base_url + path, json=body, headers=self._headers(scope), timeout=60)
        assert response.status_code == expect, response.text
        return response.json()

    def findings(self, rule: str) -> list[dict[str, Any]]:
        return list(self.get("/api/v1/catalog/findings", rule=rule)["items"])


@pytest.fixture
def console(live_server: Any, make_token: Any) -> Console:
    scopes = ("catalog:read", "approvals", "rag")
    return Console(live_server.url, {scope: make_token(f"service-{scope}", scopes=(scope,)) for scope in scopes})


@pytest.fixture
def catalog(transactional_db: Any) -> None:
    """The condor demo's shape (a clinical and a demo profile; `prescribeMedication` mutating, tier high) and a
    TUCAN catalog with `list-clinical-notes`, both imported and signed off, their vectors embedded."""
    condor = condor_manifest(
        [
            mutate_tool("prescribeMedication"),
            condor_tool("listActiveMedications"),
            condor_tool("listAllergies", module="allergy", policyDomain="allergy"),
        ]
    )
    signed_import(encode(condor))
    signed_import(encode(tucan_manifest([tucan_tool("list-clinical-notes", "ui"), tucan_tool("show-modal")])))
