"""OTLP/HTTP trace bodies in and out, with the opentelemetry-proto package's own message classes.

A body is `application/x-protobuf` (binary ExportTraceServiceRequest) or `application/json` (its JSON mapping, with
the two changes the OTLP specification makes to protobuf's: trace and span ids are hex, not base64, and enums are
integers). Either way it becomes a list of plain `RawSpan` values for the pure code in `usage.domain.spans`.
The answer is an ExportTraceServiceResponse (with `partial_success` when spans were refused) or, for a 4xx/5xx, a
google.rpc.Status, in the request's encoding.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Iterator
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from catalog.usage.domain.spans import RawSpan

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
ENCODINGS = (PROTOBUF, JSON)
ID_FIELDS = {"traceId": 16, "trace_id": 16, "spanId": 8, "span_id": 8, "parentSpanId": 8, "parent_span_id": 8}
# The deepest JSON body read, in arrays and objects. A span's attribute is 10 deep (request, resourceSpans, a
# ResourceSpans, scopeSpans, a ScopeSpans, spans, a span, attributes, an attribute, its value), a nested kvlist or
# array value a few more; protobuf's own parser stops a binary body at 100 nested messages, and this is the same
# number. Deeper, `json.loads` and the walks below (recursive, as is protobuf's ParseDict) ran out of stack: a body
# nested 50,000 levels answered 500 instead of 400.
JSON_DEPTH_MAX = 100
TOO_DEEP = (
    f"the JSON is nested too deeply: more than {JSON_DEPTH_MAX} levels of arrays and objects (a span's attribute "
    "is 10); send the ExportTraceServiceRequest as OTLP/JSON defines it"
)


class OtlpBodyError(ValueError):
    """A body that is not an ExportTraceServiceRequest in the encoding it claims: the message says where."""


def media_type(content_type: str) -> str | None:
    """`application/x-protobuf` or `application/json` (parameters such as charset ignored), else None."""
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    return kind if kind in ENCODINGS else None


def inflate(body: bytes, encoding: str, *, limit: int) -> bytes:
    """The body without its Content-Encoding (identity, gzip or deflate), refused past `limit` bytes inflated (a
    small gzip may hold gigabytes: it is read in pieces and stopped at the limit)."""
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise OtlpBodyError(f"Content-Encoding {encoding!r} is not supported; send identity, gzip or deflate")
    inflater = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise OtlpBodyError(f"the body is not valid {encoding}: {exc}") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise OtlpBodyError(f"the body inflates to more than {limit} bytes (CONDOR_OTLP_MAX_INFLATED_BYTES)")
    if not inflater.eof:
        raise OtlpBodyError(f"the {encoding} body is truncated")
    return out


def decode(body: bytes, kind: str) -> ExportTraceServiceRequest:
    message = ExportTraceServiceRequest()
    if kind == PROTOBUF:
        try:
            message.ParseFromString(body)
        except DecodeError as exc:
            raise OtlpBodyError(f"the body is not a protobuf ExportTraceServiceRequest: {exc}") from exc
        return message
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OtlpBodyError(f"the body is not JSON: {exc}") from exc
    except RecursionError:
        raise OtlpBodyError(TOO_DEEP) from None
    if _deeper_than(document, JSON_DEPTH_MAX):
        raise OtlpBodyError(TOO_DEEP)
    if not isinstance(document, dict):
        raise OtlpBodyError("the body must be a JSON object (an ExportTraceServiceRequest)")
    for key in ("resourceSpans", "resource_spans"):
        if key in document and not isinstance(document[key], list):
            raise OtlpBodyError(f"{key} must be a list of ResourceSpans, not {type(document[key]).__name__}")
        for i, item in enumerate(document.get(key) or []):
            if not isinstance(item, dict):
                raise OtlpBodyError(f"$.{key}[{i}] must be a ResourceSpans object, not {type(item).__name__}")
    _hex_ids_to_base64(document, "$")
    try:
        json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise OtlpBodyError(f"the body is not an OTLP ExportTraceServiceRequest: {exc}") from exc
    return message


def _deeper_than(document: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels; iterative, so that no depth can overflow it."""
    stack = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _hex_ids_to_base64(node: Any, where: str) -> None:
    """OTLP/JSON writes ids as hex; protobuf's JSON mapping reads bytes as base64: translate in place."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            _hex_ids_to_base64(item, f"{where}[{i}]")
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in ID_FIELDS and isinstance(value, str):
            try:
                raw = bytes.fromhex(value)
            except ValueError:
                raise OtlpBodyError(f"{where}.{key}: {value[:40]!r} is not hex") from None
            if raw and len(raw) != ID_FIELDS[key]:
                raise OtlpBodyError(f"{where}.{key}: {len(raw)} bytes; a {key} has {ID_FIELDS[key]}") from None
            node[key] = base64.b64encode(raw).decode("ascii")
        elif isinstance(value, dict | list) and key not in ("attributes", "stringValue"):
            _hex_ids_to_base64(value, f"{where}.{key}")


def spans(message: ExportTraceServiceRequest) -> Iterator[RawSpan]:
    for r, resource_spans in enumerate(message.resource_spans):
        resource = attributes(resource_spans.resource.attributes)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            for i, span in enumerate(scope_spans.spans):
                yield RawSpan(
                    path=f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]",
                    name=span.name,
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    start_ns=span.start_time_unix_nano,
                    end_ns=span.end_time_unix_nano,
                    status_code=span.status.code,
                    status_message=span.status.message,
                    attributes=attributes(span.attributes),
                    resource=resource,
                )


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value(pair.value) for pair in pairs}


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    return getattr(any_value, kind)


def encode_response(kind: str, *, rejected: int = 0, message: str = "") -> bytes:
    """The success answer: empty, or with partial_success naming how many spans were refused and why."""
    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return _encode(response, kind)


def encode_status(kind: str, *, code: int, message: str) -> bytes:
    """A 4xx/5xx answer: a google.rpc.Status (`code` a gRPC code: 3 invalid argument, 8 exhausted, 14 unavailable)."""
    return _encode(status_pb2.Status(code=code, message=message), kind)


def _encode(message: Any, kind: str) -> bytes:
    if kind == PROTOBUF:
        return bytes(message.SerializeToString())
    return json.dumps(json_format.MessageToDict(message), ensure_ascii=False).encode("utf-8")


def gzipped(body: bytes) -> bytes:
    """For tests and the benchmark: the body as an exporter with compression=gzip sends it."""
    return gzip.compress(body)
