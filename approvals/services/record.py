"""What a call the gate let through leaves behind: a suspended request, or the memory of an allowed mutation; and
whether it repeats an earlier call (a possible duplicate: the seed's duplicate prescription).

Comparing and writing happen in one transaction that first locks the tool's row (SELECT … FOR NO KEY UPDATE on
PostgreSQL), so two identical calls at the same moment are compared one after the other: the second sees the first
(READ COMMITTED reads what committed before each statement) and never runs unseen. SQLite serialises writers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from approvals.catalog_index import GateTool
from approvals.domain import (
    UNGATED,
    Decision,
    Earlier,
    PolicyOutcome,
    duplicate_window_start,
    newest_earlier,
    request_ttl,
    with_duplicate,
)
from approvals.models import AllowedCall, ApprovalRequest
from approvals.selectors import earlier_calls
from approvals.services.common import (
    OBJECT_TYPE,
    ApprovalRefused,
    args_from,
    audit_state,
    notify_soon,
    policy_domain_of,
)
from approvals.services.gate import Evaluation
from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.models import Tool


@dataclass(frozen=True)
class Call:
    """One call as the runtime sent it: what a replay must repeat beside its idempotency key, and what is kept."""

    key: str
    tool_name: str
    sha: str  # of the canonical arguments
    profile: str
    dispatch_mode: str
    run_id: str
    requested_by: str
    patient_ref: str
    tool_call_id: str = ""
    candidate_set_id: str = ""
    console_origin: str = ""  # where the runtime reached the console: links sent later point there


def call_record(
    tool: GateTool,
    outcome: PolicyOutcome,
    *,
    call: Call,
    canonical: str,
    ttl_seconds: int | None,
    now: datetime,
    via: str,
) -> Evaluation:
    """Suspend the call as a request (IntegrityError when its idempotency key is taken), or, for a mutation the
    gate allows, remember it for the duplicate window. A repeat of an earlier call is marked on its request, and
    a tier-low operator call that repeats one suspends instead of running (`with_duplicate`)."""
    since = duplicate_window_start(
        now, minutes=settings.APPROVALS_DUPLICATE_WINDOW_MINUTES, patient_ref=call.patient_ref
    )
    label = f"{tool.system}:{tool.declared_id}"
    with transaction.atomic():
        earlier = None
        if since is not None:
            list(Tool.objects.select_for_update(no_key=True).filter(pk=tool.pk).values_list("pk", flat=True))
            requests, allowed = earlier_calls(
                tool_pk=tool.pk, patient_ref=call.patient_ref, args_sha256=call.sha, since=since, now=now
            )
            earlier, retried = newest_earlier(requests, allowed, idempotency_key=call.key)
            if outcome.decision == Decision.ALLOW and retried:  # this very call again (a retry): it was allowed
                earlier = None
            outcome = with_duplicate(outcome, earlier, tool=label)
        if outcome.decision == Decision.ALLOW:
            if since is not None:
                AllowedCall.objects.bulk_create(
                    [
                        AllowedCall(
                            tool_id=tool.pk,
                            patient_ref=call.patient_ref,
                            args_sha256=call.sha,
                            idempotency_key=call.key,
                            created_at=now,
                        )
                    ],
                    ignore_conflicts=True,
                )
            return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)
        ttl = ttl_for(outcome.tier_key or UNGATED, ttl_seconds)
        req = _new_request(tool, outcome, ttl=ttl, now=now, canonical=canonical, call=call, via=via)
        _mark_duplicate(req, earlier)
        _suspend(req, earlier, via=via)  # IntegrityError here rolls back the whole block, lock included
    return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool, req, True)


def ttl_for(tier_key: str, requested: int | None) -> int:
    """How long a request of this tier waits: the tier's default, or what the runtime asked for within bounds."""
    try:
        return request_ttl(
            tier_key=tier_key,
            requested=requested,
            defaults=settings.APPROVALS_TTL_SECONDS,
            minimum=settings.APPROVALS_TTL_MIN_SECONDS,
            maxima=settings.APPROVALS_TTL_MAX_SECONDS,
        )
    except ValueError as exc:
        raise ApprovalRefused(str(exc), code="invalid-ttl", status=422) from exc


def _mark_duplicate(req: ApprovalRequest, earlier: Earlier | None) -> None:
    if earlier is None:
        return
    if earlier.request_id:
        req.duplicate_of_id = earlier.request_id
    else:
        req.duplicate_allowed_at = earlier.at


def _new_request(
    tool: GateTool, outcome: PolicyOutcome, *, ttl: int, now: datetime, canonical: str, call: Call, via: str
) -> ApprovalRequest:
    """The request a suspending call becomes: the call as the runtime sent it, the tool and the gate's outcome."""
    return ApprovalRequest(
        idempotency_key=call.key,
        submitted_via=via,
        console_origin=call.console_origin,
        requested_name=call.tool_name,
        profile=call.profile,
        dispatch_mode=call.dispatch_mode,
        run_id=call.run_id,
        requested_by=call.requested_by,
        patient_ref=call.patient_ref,
        tool_call_id=call.tool_call_id,
        candidate_set_id=call.candidate_set_id,
        tool_id=tool.pk,
        tool_system=tool.system,
        tool_declared_id=tool.declared_id,
        proposed_args=args_from(canonical),
        proposed_sha256=call.sha,
        policy_domain=policy_domain_of(tool),
        hitl_tier=tool.hitl_tier,
        tier_key=outcome.tier_key or UNGATED,
        flagged=outcome.flagged,
        policy_reason=outcome.reason,
        created_at=now,
        expires_at=now + timedelta(seconds=ttl),
    )


def _suspend(req: ApprovalRequest, earlier: Earlier | None, *, via: str) -> None:
    """Insert the request with its audit event (inside call_record's transaction); IntegrityError when its
    idempotency key is taken."""
    req.save(force_insert=True)
    audit_record(
        actor=Actor.for_token(via),
        action=AuditAction.APPROVALS_REQUEST_SUSPENDED,
        object_type=OBJECT_TYPE,
        object_id=req.pk,
        after={
            **audit_state(req),
            "flagged": req.flagged,
            "dispatch_mode": req.dispatch_mode,
            "requested_by": req.requested_by,
            "patient_ref": req.patient_ref,
            "args_sha256": req.proposed_sha256,
            "expires_at": req.expires_at,
            "idempotency_key": req.idempotency_key,
            "tool_call_id": req.tool_call_id,
            "candidate_set_id": req.candidate_set_id,
            "duplicate_of": earlier.request_id if earlier else None,
            "duplicate_of_allowed_call": earlier.idempotency_key if earlier and not earlier.request_id else None,
        },
    )
    transaction.on_commit(notify_soon)
