"""OTLP/HTTP trace ingestion: `POST /api/v1/otlp/v1/traces`, where a runtime's standard exporter (or an OpenTelemetry
Collector's `otlphttp` exporter) sends its spans (catalog/usage/README.md, "The endpoint").

As the OTLP specification has it: protobuf or JSON bodies, optionally gzip, answered 200 with an
ExportTraceServiceResponse in the request's encoding (its `partial_success` counts and names the spans refused);
400 for a body that is not an export (nothing stored); 413 above the caps; 415 for another content type; 429 with
Retry-After when this process is already ingesting its share; 503 with Retry-After when the database is away or a
lock was not granted in CONDOR_OTLP_LOCK_TIMEOUT_MS (nothing stored). A 4xx's body is a google.rpc.Status for a protobuf
request; for a JSON one it is that Status's JSON (`code`, `message`) together with the API's error shape (`detail`).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import Router
from pydantic import BaseModel, Field

from catalog.core.api_errors import ErrorOut
from catalog.core.auth import ScopedBearer
from catalog.usage import otlp
from catalog.usage.services.ingest import usage_ingest

router = Router(tags=["telemetry"], auth=ScopedBearer("telemetry"))

INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAVAILABLE = 3, 8, 14  # google.rpc.Code
log = logging.getLogger(__name__)
_in_flight = threading.BoundedSemaphore(max(1, settings.CONDOR_OTLP_MAX_CONCURRENT))


class OtlpErrorOut(ErrorOut):
    """A refused export, readable both as the API's error shape and as the google.rpc.Status OTLP specifies."""

    code: int = Field(description="the google.rpc.Code: 3 invalid argument, 8 resource exhausted, 14 unavailable")
    message: str = Field(description="the same text as `detail` (the Status field exporters log)")


class ExportTraceServiceResponseOut(BaseModel):
    """The OTLP answer in its JSON encoding; the protobuf one carries the same fields."""

    partialSuccess: dict[str, Any] | None = Field(  # noqa: N815
        None, description="{rejectedSpans, errorMessage} when spans were refused or something was not kept"
    )


_BINARY = {"schema": {"type": "string", "format": "binary"}}
OTLP_BODY = {
    "required": True,
    "description": "an OTLP ExportTraceServiceRequest, protobuf or JSON (Content-Encoding gzip or deflate "
    f"allowed); at most {settings.CONDOR_OTLP_MAX_BYTES} bytes on the wire (CONDOR_OTLP_MAX_BYTES), "
    f"{settings.CONDOR_OTLP_MAX_INFLATED_BYTES} inflated, {settings.CONDOR_OTLP_MAX_SPANS} spans",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "resourceSpans": {
                        "type": "array",
                        "maxItems": settings.CONDOR_OTLP_MAX_SPANS,
                        "items": {
                            "type": "object",
                            "description": "a ResourceSpans as OTLP/JSON defines it (the whole body at most "
                            f"{settings.CONDOR_OTLP_MAX_BYTES} bytes)",
                        },
                    }
                },
            }
        },
        "application/x-protobuf": _BINARY,
    },
}


def _error_answer(description: str, **extra: Any) -> dict[str, Any]:
    schema = {"$ref": "#/components/schemas/OtlpErrorOut"}
    return {"description": description, "content": {"application/json": {"schema": schema}, PB: _BINARY}, **extra}


PB = "application/x-protobuf"
ERROR_ANSWERS = {
    400: _error_answer("not an OTLP export in the encoding it claims (nothing stored)"),
    413: _error_answer(
        f"the body is over CONDOR_OTLP_MAX_BYTES ({settings.CONDOR_OTLP_MAX_BYTES} bytes here) or holds more "
        f"than CONDOR_OTLP_MAX_SPANS ({settings.CONDOR_OTLP_MAX_SPANS}) spans"
    ),
    415: _error_answer("neither application/x-protobuf nor application/json"),
    429: _error_answer(
        "this process is ingesting its share (CONDOR_OTLP_MAX_CONCURRENT); retry after `Retry-After` seconds",
        headers={"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}},
    ),
    503: _error_answer(
        "the database is away or a lock was not granted within CONDOR_OTLP_LOCK_TIMEOUT_MS; nothing was stored, "
        "retry after `Retry-After` seconds (OTLP exporters retry 503)",
        headers={"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}},
    ),
}


def _refusal(
    kind: str, status: int, detail: str, *, code: int = INVALID_ARGUMENT, retry_after: int = 0
) -> HttpResponse:
    if kind == otlp.PROTOBUF:
        response = HttpResponse(otlp.encode_status(kind, code=code, message=detail), content_type=kind, status=status)
    else:
        body = {"detail": detail, "errors": [], "code": code, "message": detail}
        response = HttpResponse(json.dumps(body), content_type=otlp.JSON, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


@router.post(
    "/v1/traces",
    response={
        200: ExportTraceServiceResponseOut,
        400: OtlpErrorOut,
        413: OtlpErrorOut,
        415: OtlpErrorOut,
        429: OtlpErrorOut,
        503: OtlpErrorOut,
    },
    summary="Ingest OpenTelemetry spans (OTLP/HTTP); GenAI execute_tool spans are kept",
    description="The body is read raw, so ninja does not parse it; the OTLP specification defines it. 200 answers "
    "an ExportTraceServiceResponse whose partialSuccess counts and names refused spans; 429 carries Retry-After.",
    openapi_extra={"requestBody": OTLP_BODY, "responses": ERROR_ANSWERS},
)
def export_traces(request: HttpRequest) -> HttpResponse:
    kind = otlp.media_type(request.content_type or "") or ""
    if not kind:
        return _refusal(
            otlp.JSON, 415, f"Content-Type {request.content_type!r}: send application/x-protobuf or application/json"
        )
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    limit = settings.CONDOR_OTLP_MAX_BYTES
    if declared > limit:
        return _refusal(
            kind,
            413,
            f"the export is {declared} bytes; the limit is {limit} (CONDOR_OTLP_MAX_BYTES): send smaller batches",
            code=RESOURCE_EXHAUSTED,
        )
    if not _in_flight.acquire(blocking=False):
        return _refusal(
            kind,
            429,
            "this process is ingesting as many exports as it may; retry after Retry-After seconds",
            code=RESOURCE_EXHAUSTED,
            retry_after=settings.CONDOR_OTLP_RETRY_AFTER_SECONDS,
        )
    try:
        return _ingest(request, kind)
    finally:
        _in_flight.release()


def _ingest(request: HttpRequest, kind: str) -> HttpResponse:
    try:
        body = otlp.inflate(
            request.body, request.headers.get("Content-Encoding", ""), limit=settings.CONDOR_OTLP_MAX_INFLATED_BYTES
        )
        message = otlp.decode(body, kind)
    except otlp.OtlpBodyError as exc:
        return _refusal(kind, 400, f"{exc}; nothing was stored")
    spans = list(otlp.spans(message))
    if len(spans) > settings.CONDOR_OTLP_MAX_SPANS:
        return _refusal(
            kind,
            413,
            f"the export holds {len(spans)} spans; at most {settings.CONDOR_OTLP_MAX_SPANS} "
            "(CONDOR_OTLP_MAX_SPANS): send smaller batches; nothing was stored",
            code=RESOURCE_EXHAUSTED,
        )
    try:
        result = usage_ingest(spans)
    except (OperationalError, InterfaceError) as exc:
        # In the export's encoding (a protobuf exporter reads a google.rpc.Status), unlike the API's JSON 503.
        log.error("OTLP export of %d spans answered 503, database unavailable: %s", len(spans), exc)
        return _refusal(
            kind,
            503,
            "the database is unavailable or busy; nothing was stored: retry after Retry-After seconds",
            code=UNAVAILABLE,
            retry_after=settings.CONDOR_OTLP_RETRY_AFTER_SECONDS,
        )
    answer = otlp.encode_response(kind, rejected=result.rejected, message=result.message())
    return HttpResponse(answer, content_type=kind, status=200)
