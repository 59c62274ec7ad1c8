"""The runtime's approvals API: evaluate a call, poll (long-poll) its request, consume or cancel it."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Annotated, Any, Literal

from django.conf import settings
from django.db import connection
from django.http import HttpRequest
from django.utils import timezone
from ninja import Field, Path, Query, Router, Status
from pydantic import BaseModel, ConfigDict

from approvals.domain import CANDIDATE_SET_ID, State
from approvals.models import ApprovalRequest
from approvals.notify import console_origin, request_link
from approvals.selectors import parse_request_id, request_get, request_state
from approvals.services import ApprovalRefused, approval_cancel, approval_consume, approval_evaluate
from catalog.core import api_errors
from catalog.core.api_input import ApiInput
from catalog.core.auth import ScopedBearer
from catalog.domain.vocabulary import SYSTEM_MAX, SYSTEM_PATTERN

router = Router(tags=["approvals"], auth=ScopedBearer("approvals"))

# The schemas are plain pydantic models, not ninja's Schema: the API builds its answers as dicts, so ninja's
# attribute resolver (for ORM objects) would only add CPU to every call (it tripled the input validation's).


class ToolOut(BaseModel):
    system: str
    id: str
    canonicalKey: str  # noqa: N815 - the API speaks camelCase, as the runtime does
    llmName: str  # noqa: N815


class RequestOut(BaseModel):
    id: str
    state: str
    url: str
    tool: ToolOut
    hitlTier: str | None  # noqa: N815
    tierKey: str  # noqa: N815
    flagged: bool
    policyDomain: str  # noqa: N815
    policyReason: str  # noqa: N815
    profile: str
    dispatchMode: str  # noqa: N815
    runId: str  # noqa: N815
    requestedBy: str  # noqa: N815
    patientRef: str  # noqa: N815
    args: dict[str, Any]
    argsSha256: str  # noqa: N815
    approvedArgs: dict[str, Any] | None  # noqa: N815
    approvedArgsSha256: str | None  # noqa: N815
    argsEdited: bool  # noqa: N815
    createdAt: datetime  # noqa: N815
    expiresAt: datetime  # noqa: N815
    decidedAt: datetime | None  # noqa: N815
    decidedBy: str | None  # noqa: N815
    reason: str
    consumableUntil: datetime | None  # noqa: N815
    consumedAt: datetime | None  # noqa: N815
    cancelledAt: datetime | None  # noqa: N815
    escalatedTo: str | None  # noqa: N815
    toolCallId: str | None  # noqa: N815
    candidateSetId: str | None  # noqa: N815
    # A possible duplicate: the id of the earlier request with the same tool, patient and arguments.
    duplicateOf: str | None  # noqa: N815


class EvaluateIn(ApiInput):
    # Strict: a JSON `true` or `"60"` is not a number of seconds (lax parsing took them as 1 and 60).
    model_config = ConfigDict(strict=True)

    tool: str = Field(min_length=1, max_length=200, description="any spelling of the tool id")
    profile: str = Field(min_length=1, max_length=100, description="the catalog profile of the run")
    dispatchMode: Literal["operator", "supervised", "ambient"]  # noqa: N815
    runId: str = Field(min_length=1, max_length=200)  # noqa: N815
    requestedBy: str = Field(min_length=1, max_length=200, description="who asked; may not approve it")  # noqa: N815
    patientRef: str = Field("", max_length=200)  # noqa: N815
    args: dict[str, Any] = Field(
        description=f"the call's arguments, checked against the tool's input schema; at most "
        f"{settings.APPROVALS_MAX_ARGS_BYTES} bytes as canonical JSON (APPROVALS_MAX_ARGS_BYTES)"
    )
    idempotencyKey: str = Field(min_length=1, max_length=200)  # noqa: N815
    # Checked in approval_evaluate against the tier's own maximum (a 422 that names it); the schema gives the widest.
    ttlSeconds: int | None = Field(  # noqa: N815
        None,
        description="override the tier's default expiry, within the tier's limits",
        json_schema_extra={
            "minimum": settings.APPROVALS_TTL_MIN_SECONDS,
            "maximum": max(settings.APPROVALS_TTL_MAX_SECONDS.values()),
        },
    )
    system: str | None = Field(
        None,
        max_length=SYSTEM_MAX,
        pattern=SYSTEM_PATTERN,
        description="condor, tucan or mcp:<server id>: choose when a name matches tools of several catalogs",
    )
    toolCallId: str | None = Field(  # noqa: N815
        None,
        min_length=1,
        max_length=200,
        description="the runtime's id of this tool call (gen_ai.tool.call.id): kept on a suspended request, which is "
        "then consumed for this tool call only; a replay must repeat it",
    )
    # Checked in approval_evaluate (a 422 that says what the id looks like); the schema documents the same shape.
    candidateSetId: str | None = Field(  # noqa: N815
        None,
        max_length=40,
        description="the candidateSetId POST /api/v1/rag/resolve served the run: the call is refused unless its "
        "tool is in that set, served for this profile",
        json_schema_extra={"pattern": CANDIDATE_SET_ID.pattern},
    )


class EvaluateOut(BaseModel):
    decision: str
    reason: str
    detail: str
    tool: ToolOut | None = None
    request: RequestOut | None = None
    replayed: bool = False


# Not imported by name: here every error answer is an ApprovalErrorOut (the common ErrorOut would drop `reason`).
class ApprovalErrorOut(api_errors.ErrorOut):
    """A refusal of the approvals API: the common shape, with a stable `reason` code and what it concerns."""

    reason: str | None = None
    decision: str | None = None
    candidates: list[str] = []
    request: RequestOut | None = None


class ConsumeIn(BaseModel):
    argsSha256: str = Field(min_length=64, max_length=64, pattern="^[0-9a-f]{64}$")  # noqa: N815
    toolCallId: str | None = Field(  # noqa: N815
        None,
        min_length=1,
        max_length=200,
        description="the tool call this approval is spent for: refused (409 tool-call-mismatch) when the request "
        "names another; recorded when it names none",
    )


class CancelIn(ApiInput):
    model_config = ConfigDict(strict=True)

    reason: str = Field("", max_length=1000)


# The cancel body is optional, so the handler reads it itself and ninja cannot describe it: this does.
CANCEL_BODY = {"required": False, "content": {"application/json": {"schema": CancelIn.model_json_schema()}}}
# Any spelling uuid.UUID reads is looked up (the longest, urn:uuid:…, has 45 characters); anything else is a 404.
RequestId = Annotated[str, Path(..., max_length=45, description="the request's id, a UUID")]


def tool_out(tool: Any) -> dict[str, str]:
    return {"system": tool.system, "id": tool.declared_id, "canonicalKey": tool.canonical_key, "llmName": tool.llm_name}


def request_out(
    req: ApprovalRequest, now: datetime | None = None, tool: Any = None, http: HttpRequest | None = None
) -> dict[str, Any]:
    """The request as the runtime reads it; `tool` saves a query when the caller has the tool at hand; `http`:
    the API call, whose host the link uses unless APPROVALS_BASE_URL is set (approvals.links)."""
    state = req.state_at(now or timezone.now())
    return {
        "id": str(req.pk),
        "state": state,
        "url": request_link(req, http),
        "tool": tool_out(tool or req.tool),
        "hitlTier": req.hitl_tier,
        "tierKey": req.tier_key,
        "flagged": req.flagged,
        "policyDomain": req.policy_domain,
        "policyReason": req.policy_reason,
        "profile": req.profile,
        "dispatchMode": req.dispatch_mode,
        "runId": req.run_id,
        "requestedBy": req.requested_by,
        "patientRef": req.patient_ref,
        "args": req.proposed_args,
        "argsSha256": req.proposed_sha256,
        # The runtime executes exactly these (the approver may have edited them) and consumes their hash.
        "approvedArgs": req.approved_args,
        "approvedArgsSha256": req.approved_sha256,
        "argsEdited": req.args_edited,
        "createdAt": req.created_at,
        "expiresAt": req.expires_at,
        "decidedAt": req.decided_at,
        "decidedBy": req.decided_by.get_username() if req.decided_by is not None else None,
        "reason": req.decision_reason or req.cancel_reason,
        "consumableUntil": req.consumable_until,
        "consumedAt": req.consumed_at,
        "cancelledAt": req.cancelled_at,
        "escalatedTo": req.escalated_to or None,
        "toolCallId": req.tool_call_id or None,
        "candidateSetId": req.candidate_set_id or None,
        "duplicateOf": str(req.duplicate_of_id) if req.duplicate_of_id else None,
    }


def refused(exc: ApprovalRefused, http: HttpRequest | None = None) -> Status[dict[str, Any]]:
    body: dict[str, Any] = {"detail": exc.message, "errors": exc.errors, "reason": exc.code}
    if exc.request is not None:
        body["request"] = request_out(exc.request, http=http)
    return Status(exc.status, body)


def _not_found(request_id: str) -> Status[dict[str, Any]]:
    return Status(404, {"detail": f"no approval request {request_id!r}", "reason": "not-found"})


@router.post(
    "/evaluate",
    response={200: EvaluateOut, 201: EvaluateOut, 409: ApprovalErrorOut, 422: ApprovalErrorOut},
    summary="May this tool call run? allow, suspend (an approval request) or refuse",
)
def evaluate(request: HttpRequest, payload: EvaluateIn) -> Status[dict[str, Any]]:
    try:
        result = approval_evaluate(
            tool_name=payload.tool,
            profile=payload.profile,
            dispatch_mode=payload.dispatchMode,
            run_id=payload.runId,
            requested_by=payload.requestedBy,
            patient_ref=payload.patientRef,
            args=payload.args,
            idempotency_key=payload.idempotencyKey,
            ttl_seconds=payload.ttlSeconds,
            system=payload.system,
            tool_call_id=payload.toolCallId or "",
            candidate_set_id=payload.candidateSetId,
            via=request.auth.name,  # type: ignore[attr-defined]
            console_origin=console_origin(request),
        )
    except ApprovalRefused as exc:
        return refused(exc, request)
    if result.decision == "refuse":
        # A refusal is a 422 so that a client which only checks the status still does not run the call.
        return Status(
            422,
            {"decision": "refuse", "reason": result.reason, "detail": result.message, "candidates": result.candidates},
        )
    body: dict[str, Any] = {
        "decision": result.decision,
        "reason": result.reason,
        "detail": result.message,
        "tool": tool_out(result.tool) if result.tool else None,
    }
    if result.request is not None:
        body["request"] = request_out(result.request, tool=result.tool, http=request)
        body["replayed"] = not result.created
    return Status(201 if result.created else 200, body)


def _between_reads() -> None:
    """Between two reads of a long-poll, what Django does between two requests: the connection stays open as
    long as CONN_MAX_AGE allows, is closed if it is older or broke, and the next read checks it before use (after
    a PostgreSQL restart the waiter reconnects). Closing it before every sleep cost a new PostgreSQL backend per
    waiter per interval: about 8 ms of PostgreSQL CPU and 1 ms of web CPU each, for a read of 0.1 + 0.1 ms (and
    no slot is saved: each thread holds its own connection between requests anyway).
    Not inside a transaction (a test's, or ATOMIC_REQUESTS): closing would end it."""
    if not connection.in_atomic_block:
        connection.close_if_unusable_or_obsolete()


@router.get(
    "/{request_id}",
    response={200: RequestOut, 404: ApprovalErrorOut, 422: ApprovalErrorOut},
    summary="A request's state; with ?wait=N (≤ 30) waits until it is decided, expired or N seconds pass",
)
def get_request(
    request: HttpRequest,
    request_id: RequestId,
    # Checked below against the live setting, with a message that says what to do; the schema gives the same bound.
    wait: Annotated[
        int, Field(json_schema_extra={"minimum": 0, "maximum": settings.APPROVALS_LONG_POLL_MAX_SECONDS})
    ] = Query(0, description="seconds to wait while the request is pending"),
) -> Status[dict[str, Any]]:
    limit = settings.APPROVALS_LONG_POLL_MAX_SECONDS
    if not 0 <= wait <= limit:
        return Status(422, {"detail": f"wait: between 0 and {limit} seconds; poll again if still pending"})
    pk = parse_request_id(request_id)
    if pk is not None and wait == 0:  # a plain poll: one read
        found = request_get(pk)
        return Status(200, request_out(found, http=request)) if found is not None else _not_found(request_id)
    row = request_state(pk) if pk is not None else None
    if pk is None or row is None:
        return _not_found(request_id)
    # One indexed primary-key read per interval (about a second) per waiter: cheap, and no busy loop.
    deadline = time.monotonic() + wait
    interval = settings.APPROVALS_LONG_POLL_INTERVAL_SECONDS
    while row[0] == State.PENDING and row[1] > timezone.now() and (left := deadline - time.monotonic()) > 0:
        _between_reads()
        time.sleep(min(interval, left))
        row = request_state(pk) or row
    req = request_get(pk)
    assert req is not None
    return Status(200, request_out(req, http=request))


@router.post(
    "/{request_id}/consume",
    response={200: RequestOut, 404: ApprovalErrorOut, 409: ApprovalErrorOut},
    summary="Spend an approval: once, for the approved arguments' hash (and the request's tool call) only",
)
def consume(request: HttpRequest, request_id: RequestId, payload: ConsumeIn) -> Status[dict[str, Any]]:
    pk = parse_request_id(request_id)
    if pk is None:
        return _not_found(request_id)
    try:
        req = approval_consume(
            request_id=pk,
            args_sha256=payload.argsSha256,
            tool_call_id=payload.toolCallId or "",
            via=request.auth.name,  # type: ignore[attr-defined]
        )
    except ApprovalRefused as exc:
        return refused(exc, request)
    return Status(200, request_out(req, http=request))


@router.post(
    "/{request_id}/cancel",
    response={200: RequestOut, 404: ApprovalErrorOut, 409: ApprovalErrorOut, 422: ApprovalErrorOut},
    summary="Withdraw a request the runtime no longer needs (pending, or approved and unused)",
    description='The body is optional: `{"reason": "…"}`.',
    openapi_extra={"requestBody": CANCEL_BODY},
)
def cancel(request: HttpRequest, request_id: RequestId) -> Status[dict[str, Any]]:
    pk = parse_request_id(request_id)
    if pk is None:
        return _not_found(request_id)
    # The body is optional (a bare POST withdraws), which ninja's body parameters cannot express.
    reason = ""
    if request.content_type == "application/json" and request.body.strip():
        try:
            reason = CancelIn.model_validate_json(request.body).reason
        except ValueError as exc:
            return Status(422, {"detail": f'body: expected {{"reason": "…"}} or nothing ({exc.__class__.__name__})'})
    try:
        req, _already = approval_cancel(request_id=pk, reason=reason, via=request.auth.name)  # type: ignore[attr-defined]
    except ApprovalRefused as exc:
        return refused(exc, request)
    return Status(200, request_out(req, http=request))
