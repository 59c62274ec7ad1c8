"""OTLP export bodies for the telemetry tests, built with opentelemetry-proto's own classes."""

from __future__ import annotations

import base64
import json
import os
import time
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status


def _value(v: Any) -> AnyValue:
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, float):
        return AnyValue(double_value=v)
    return AnyValue(string_value=str(v))


def tool_span(
    tool: str,
    *,
    call_id: str = "",
    ms: float = 40.0,
    error: str = "",
    status_error: bool = False,
    start_ns: int | None = None,
    **attrs: Any,
) -> Span:
    """An execute_tool span as the GenAI conventions describe it; `attrs` adds any attribute (dots as `__`)."""
    start = start_ns if start_ns is not None else time.time_ns() - int(ms * 1e6) - 1_000_000
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    if call_id:
        attributes["gen_ai.tool.call.id"] = call_id
    if error:
        attributes["error.type"] = error
    attributes.update({k.replace("__", "."): v for k, v in attrs.items()})
    return Span(
        trace_id=os.urandom(16),
        span_id=os.urandom(8),
        name=f"execute_tool {tool}",
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=start,
        end_time_unix_nano=start + int(ms * 1e6),
        attributes=[KeyValue(key=k, value=_value(v)) for k, v in attributes.items()],
        status=Status(code=Status.STATUS_CODE_ERROR if (error or status_error) else Status.STATUS_CODE_UNSET),
    )


def export(spans: list[Span], service: str = "mastra-runtime") -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource={"attributes": [KeyValue(key="service.name", value=AnyValue(string_value=service))]},
                scope_spans=[ScopeSpans(scope={"name": "mastra"}, spans=spans)],
            )
        ]
    )


def as_protobuf(request: ExportTraceServiceRequest) -> bytes:
    return request.SerializeToString()


def as_json(request: ExportTraceServiceRequest) -> bytes:
    """OTLP/JSON: protobuf's JSON mapping with hex trace and span ids (the specification's one difference)."""
    document = json_format.MessageToDict(request)
    for rs in document.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(document).encode()
