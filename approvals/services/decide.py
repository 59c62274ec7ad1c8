"""The approver's act: approve (optionally with edited arguments) or reject, exactly once."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from approvals.domain import (
    ArgsError,
    State,
    args_sha256,
    canonical_args,
    effective_state,
)
from approvals.models import ApprovalRequest
from approvals.schema import schema_errors
from approvals.selectors import is_own_request, may_decide
from approvals.services.common import (
    OBJECT_TYPE,
    ApprovalRefused,
    applied,
    args_from,
    audit_state,
    decided_message,
    load_request,
)
from catalog.core.audit import Actor, AuditAction, audit_record

# --- decide (the approver's act) -------------------------------------------------------------------


def approval_decide(
    *,
    request_id: Any,
    approver: Any,
    decision: str,
    reason: str = "",
    approved_args: dict[str, Any] | None = None,
    bulk: bool = False,
    now: datetime | None = None,
    loaded: ApprovalRequest | None = None,
) -> ApprovalRequest:
    """Approve (optionally with edited arguments) or reject one request, exactly once.

    A second approver, or a decision after expiry, gets ApprovalRefused with code `already-decided` /
    `expired` and the message "already approved by X at T": it is an answer, not an error.
    `loaded`: the request as the caller has just read it (the console does, to check it may see it), which
    saves a second read; whatever it says, the UPDATE below only wins on a request still pending.
    """
    now = now or timezone.now()
    req = loaded if loaded is not None and str(loaded.pk) == str(request_id) else load_request(request_id)
    reason = (reason or "").strip()
    _refuse_unless_decidable(req, approver=approver, decision=decision, reason=reason, bulk=bulk, now=now)
    fields: dict[str, Any] = {"decided_at": now, "decided_by": approver, "decision_reason": reason}
    action = AuditAction.APPROVALS_REQUEST_APPROVED
    if decision == "approve":
        final_args, edited = _approved_args(req, approved_args)
        fields.update(
            state=State.APPROVED.value,
            approved_args=final_args,
            approved_sha256=args_sha256(final_args),
            args_edited=edited,
            consumable_until=now + timedelta(seconds=settings.APPROVALS_CONSUME_WINDOW_SECONDS),
        )
    else:
        fields.update(state=State.REJECTED.value)
        action = AuditAction.APPROVALS_REQUEST_REJECTED
    _decide_once(req, approver=approver, fields=fields, action=action, now=now)
    return applied(req, fields)  # the row is now exactly this: no read back


def _refuse_unless_decidable(
    req: ApprovalRequest, *, approver: Any, decision: str, reason: str, bulk: bool, now: datetime
) -> None:
    """Every reason this approver may not make this decision now, checked before anything is written."""
    if not may_decide(approver, req):
        raise ApprovalRefused(
            f"you may not decide requests of domain {req.policy_domain}: that needs the group "
            f"approver:{req.policy_domain}",
            code="forbidden",
            status=403,
        )
    if is_own_request(approver, req):
        # Compared as `identity_key`s: a look-alike or decorated spelling of the approver's name is still them.
        raise ApprovalRefused(
            f"you asked for this call (requestedBy {req.requested_by!r} names you); another approver must "
            "decide it (four-eyes)",
            code="own-request",
            status=403,
        )
    if decision not in ("approve", "reject"):
        raise ApprovalRefused("decision must be approve or reject", code="invalid-decision", status=422)
    if decision == "reject" and not reason:
        raise ApprovalRefused(
            "reason: say why you reject this call (the runtime shows it)", code="reason-required", status=422
        )
    if bulk and req.tier_key != "low":
        raise ApprovalRefused(
            f"{req.tool_declared_id} is tier {req.tier_key}: no bulk approval; open it and decide it on its own",
            code="no-bulk-for-tier",
            status=422,
        )
    if bulk and req.possible_duplicate:
        raise ApprovalRefused(
            _(
                "%(tool)s may repeat an earlier call (same tool, patient and arguments): no bulk approval; open it "
                "and compare"
            )
            % {"tool": req.tool_declared_id},
            code="no-bulk-for-duplicate",
            status=422,
        )
    if effective_state(req.state, req.expires_at, now) != State.PENDING:
        code, message = decided_message(req, now)
        raise ApprovalRefused(message, code=code, status=409, request=req)


def _approved_args(req: ApprovalRequest, approved_args: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """The arguments the runtime will run, and whether the approver edited them (only against an input schema)."""
    if approved_args is None:
        return req.proposed_args, False
    try:
        edited_sha = args_sha256(approved_args)
    except ArgsError as exc:
        raise ApprovalRefused(str(exc), code="invalid-args", status=422) from exc
    if edited_sha == req.proposed_sha256:
        return req.proposed_args, False
    if not req.tool.input_schema:
        raise ApprovalRefused(
            f"{req.tool_declared_id} has no input schema, so its arguments cannot be edited here; "
            "approve them as proposed or reject with a reason",
            code="no-schema",
            status=422,
        )
    problems = schema_errors(approved_args, req.tool.input_schema)
    if problems:
        raise ApprovalRefused(
            f"the edited arguments do not match the input schema of {req.tool_declared_id}",
            code="invalid-args",
            status=422,
            errors=problems,
        )
    return args_from(canonical_args(approved_args)), True


def _decide_once(
    req: ApprovalRequest, *, approver: Any, fields: dict[str, Any], action: AuditAction, now: datetime
) -> None:
    """Write the decision with its audit event, or refuse because another decision (or the expiry) came first."""
    with transaction.atomic():
        # The decision itself: one conditional UPDATE that only a pending, unexpired request passes, so exactly
        # one of two concurrent decisions wins (the database serialises the two UPDATEs of the row).
        won = ApprovalRequest.objects.filter(pk=req.pk, state=State.PENDING.value, expires_at__gt=now).update(**fields)
        if won:
            after = {k: v for k, v in fields.items() if k not in ("decided_by", "approved_args")}
            after["decided_by"] = approver.get_username()
            if fields.get("args_edited"):
                after.update(proposed_sha256=req.proposed_sha256, approved_args=fields["approved_args"])
            audit_record(
                actor=Actor.for_user(approver),
                action=action,
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                before=audit_state(req),
                after=after,
            )
    if not won:
        current = load_request(req.pk)
        code, message = decided_message(current, now)
        raise ApprovalRefused(message, code=code, status=409, request=current)
