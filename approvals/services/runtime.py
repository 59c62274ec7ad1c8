"""The runtime's acts on a decided request: consume (once, for the approved hash) and cancel."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from approvals.domain import (
    State,
    consume_refusal,
)
from approvals.models import ApprovalRequest
from approvals.services.common import (
    OBJECT_TYPE,
    ApprovalRefused,
    applied,
    audit_state,
    decided_message,
    load_request,
)
from catalog.core.audit import Actor, AuditAction, audit_record

# --- consume and cancel (the runtime's acts) -------------------------------------------------------


def approval_consume(
    *, request_id: Any, args_sha256: str, via: str, tool_call_id: str = "", now: datetime | None = None
) -> ApprovalRequest:
    """Spend an approval: once, and only for the arguments approved. Everything else is refused.

    `tool_call_id`: the tool call it is spent for. A request that names one (at evaluate, or at an earlier consume)
    is spent only for that one; a request that names none records this one as it is spent."""
    now = now or timezone.now()
    req = load_request(request_id)

    def refusal(r: ApprovalRequest) -> ApprovalRefused | None:
        found = consume_refusal(
            state=r.state,
            expires_at=r.expires_at,
            consumable_until=r.consumable_until,
            approved_sha256=r.approved_sha256,
            presented_sha256=args_sha256,
            now=now,
            tool_call_id=r.tool_call_id,
            presented_tool_call_id=tool_call_id,
        )
        return ApprovalRefused(found[1], code=found[0], status=409, request=r) if found else None

    refused = refusal(req)
    if refused:
        raise refused
    with transaction.atomic():
        # Spending an approval: one conditional UPDATE that only an approved, unspent request within its window
        # and with the approved arguments passes, so exactly one of two concurrent consumes wins.
        # A tool call id given is recorded in the same UPDATE, which only passes while the request names no other.
        spent: dict[str, Any] = {"state": State.CONSUMED.value, "consumed_at": now}
        call = Q()
        if tool_call_id:
            spent["tool_call_id"] = tool_call_id
            call = Q(tool_call_id="") | Q(tool_call_id=tool_call_id)
        won = (
            ApprovalRequest.objects.filter(call)
            .filter(pk=req.pk, state=State.APPROVED.value, approved_sha256=args_sha256, consumable_until__gt=now)
            .update(**spent)
        )
        if won:
            audit_record(
                actor=Actor.for_token(via),
                action=AuditAction.APPROVALS_REQUEST_CONSUMED,
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                before=audit_state(req),
                after={
                    "state": State.CONSUMED.value,
                    "args_sha256": args_sha256,
                    "consumed_at": now,
                    "tool_call_id": tool_call_id or req.tool_call_id,
                },
            )
    if not won:
        current = load_request(req.pk)
        raise refusal(current) or ApprovalRefused("the approval was consumed concurrently", code="already-consumed")
    return applied(req, spent)  # the row now: no read back


def approval_cancel(
    *, request_id: Any, reason: str, via: str, now: datetime | None = None
) -> tuple[ApprovalRequest, bool]:
    """Withdraw a request (pending, or approved and not yet consumed). Returns (request, already_cancelled):
    cancelling twice is an answer, so a retried cancel is safe."""
    now = now or timezone.now()
    req = load_request(request_id)
    if req.state == State.CANCELLED:
        return req, True
    reason = (reason or "").strip()
    with transaction.atomic():
        won = (
            ApprovalRequest.objects.filter(pk=req.pk)
            # A pending request past due is expired, not cancellable; an approved one may still be withdrawn.
            .filter(Q(state=State.PENDING.value, expires_at__gt=now) | Q(state=State.APPROVED.value))
            .update(state=State.CANCELLED.value, cancelled_at=now, cancel_reason=reason)
        )
        if won:
            audit_record(
                actor=Actor.for_token(via),
                action=AuditAction.APPROVALS_REQUEST_CANCELLED,
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                before=audit_state(req),
                after={"state": State.CANCELLED.value, "reason": reason},
            )
    current = load_request(req.pk)
    if not won:
        if current.state == State.CANCELLED:
            return current, True
        code, message = decided_message(current, now)
        if current.state == State.CONSUMED:
            code, message = "already-consumed", "the approval was already consumed: the call ran; nothing to cancel"
        raise ApprovalRefused(f"cannot cancel: {message}", code=code, status=409, request=current)
    return current, False
