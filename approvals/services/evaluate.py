"""The runtime's question: may this tool call run now? (allow, suspend as an approval request, refuse)"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone

from approvals.catalog_index import GateTool
from approvals.domain import (
    TIER_LOW_OPERATOR,
    UNGATED,
    ArgsError,
    Decision,
    PolicyOutcome,
    candidate_set_id_problem,
    canonical_args,
    identity_key,
    replay_conflict,
    replay_differences,
)
from approvals.models import ApprovalRequest
from approvals.selectors import candidate_set_get
from approvals.services.common import ApprovalRefused, request_by_key
from approvals.services.gate import CandidateSetClaim, Evaluation, gate_call
from approvals.services.record import Call, call_record, ttl_for
from catalog.domain.keys import canonical_key

# --- evaluate (the runtime's question) -------------------------------------------------------------


def _replay(existing: ApprovalRequest, call: Call) -> Evaluation:
    """The same idempotency key again: the same request if this is the same call (a retry), else a 409 that
    names what differs. A replay answers with the whole request, patient included, so only a call that repeats
    all of it (tool, arguments, profile, dispatch mode, run, requester, patient, tool call) may have it."""
    same_tool = canonical_key(call.tool_name) in {
        canonical_key(existing.requested_name),
        canonical_key(existing.tool_declared_id),
    }
    first = {
        "tool": True,
        "args": existing.proposed_sha256,
        "profile": existing.profile,
        "dispatchMode": existing.dispatch_mode,
        "runId": existing.run_id,
        "requestedBy": existing.requested_by,
        "patientRef": existing.patient_ref,
        "toolCallId": existing.tool_call_id,
    }
    again = {
        "tool": same_tool,
        "args": call.sha,
        "profile": call.profile,
        "dispatchMode": call.dispatch_mode,
        "runId": call.run_id,
        "requestedBy": call.requested_by,
        "patientRef": call.patient_ref,
        "toolCallId": call.tool_call_id,
    }
    differs = replay_differences(first, again)
    if differs:
        message, errors = replay_conflict(call.key, existing.tool_declared_id, differs)
        # No `request` in the answer: it is the first call's, and this caller has not shown it is theirs.
        raise ApprovalRefused(message, code="idempotency-key-reused", status=409, errors=errors)
    return Evaluation(Decision.SUSPEND.value, existing.policy_reason, "replayed", existing.tool, existing, False)


def _replay_or(result: Evaluation, call: Call) -> Evaluation:
    """A call that inserts nothing still answers a retry of an earlier suspended call with its request."""
    if ApprovalRequest.objects.filter(idempotency_key=call.key).exists():
        return _replay(request_by_key(call.key), call)
    return result


def approval_evaluate(
    *,
    tool_name: str,
    profile: str,
    dispatch_mode: str,
    run_id: str,
    requested_by: str,
    patient_ref: str,
    args: dict[str, Any],
    idempotency_key: str,
    via: str,
    ttl_seconds: int | None = None,
    system: str | None = None,
    tool_call_id: str = "",
    candidate_set_id: str | None = None,
    console_origin: str = "",
    now: datetime | None = None,
) -> Evaluation:
    """May this call run now? Allow, suspend (one request per idempotency key, however many submits
    race) or refuse. Raises ApprovalRefused for requests the runtime must fix (status 409/422).

    The idempotency key is enforced by the unique index: a suspending call inserts optimistically and a
    duplicate key turns into a replay. Calls that would not insert (allow, refuse, invalid) look the key up,
    so a retry still gets its request back after the catalog changed under it. A mutation that repeats an
    earlier call for the same patient is a possible duplicate (approvals.services.record).
    """
    now = now or timezone.now()
    canonical, sha = _canonical_within_limit(args)
    _check_requester(requested_by)
    claim = _claim(candidate_set_id, now)
    call = Call(
        key=idempotency_key,
        tool_name=tool_name,
        sha=sha,
        profile=profile,
        dispatch_mode=dispatch_mode,
        run_id=run_id,
        requested_by=requested_by,
        patient_ref=patient_ref,
        tool_call_id=tool_call_id,
        candidate_set_id=candidate_set_id or "",
        console_origin=console_origin[:300],
    )
    gated = _through_gate(call, args=args, system=system, claim=claim, ttl_seconds=ttl_seconds)
    if isinstance(gated, Evaluation):
        return gated
    tool, outcome = gated
    try:
        return call_record(tool, outcome, call=call, canonical=canonical, ttl_seconds=ttl_seconds, now=now, via=via)
    except IntegrityError:
        # This key was used before (a retry), or another submit with it committed first: its request answers.
        return _replay(request_by_key(idempotency_key), call)


def _through_gate(
    call: Call, *, args: dict[str, Any], system: str | None, claim: CandidateSetClaim | None, ttl_seconds: int | None
) -> Evaluation | tuple[GateTool, PolicyOutcome]:
    """The answer when the gate's is final (a refusal, a read, a retry of a suspended call), else the tool and the
    outcome of a call to record (it suspends, or it is a mutation allowed: approvals.services.record)."""
    try:
        gate = gate_call(
            tool_name=call.tool_name,
            system=system,
            profile=call.profile,
            dispatch_mode=call.dispatch_mode,
            args=args,
            claim=claim,
        )
        if isinstance(gate, Evaluation):  # refused: nothing to insert
            return _replay_or(gate, call)
        tool, outcome = gate
        if outcome.decision == Decision.ALLOW:
            allowed = Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)
            replayed = _replay_or(allowed, call)
            if replayed is not allowed or outcome.reason != TIER_LOW_OPERATOR:
                return replayed  # a read runs (nothing to remember), or this key's request answers
        else:
            ttl_for(outcome.tier_key or UNGATED, ttl_seconds)  # a bad ttlSeconds is refused before anything is written
        return tool, outcome
    except ApprovalRefused as refusal:
        refused = Evaluation(Decision.REFUSE.value, refusal.code, refusal.message)
        replayed = _replay_or(refused, call)
        if replayed.request is not None:
            return replayed
        raise


def _claim(candidate_set_id: str | None, now: datetime) -> CandidateSetClaim | None:
    """The candidate set the call names, with what the console knows of it; a malformed id is refused (422)."""
    if candidate_set_id is None:
        return None
    problem = candidate_set_id_problem(candidate_set_id)
    if problem:
        raise ApprovalRefused(problem, code="invalid-candidate-set-id", status=422)
    return CandidateSetClaim(candidate_set_id, candidate_set_get(candidate_set_id, now=now))


def _check_requester(requested_by: str) -> None:
    """Four-eyes needs to know who asked: a requestedBy that names nobody once invisible characters and
    decorations are removed (`user:`, a zero-width space) could never be told apart from an approver."""
    if not identity_key(requested_by):
        raise ApprovalRefused(
            f"requestedBy: {requested_by!r} names nobody once case, invisible characters and decorations "
            "(`user:`, `@domain`) are removed; send the username or e-mail of the person who asked",
            code="invalid-requested-by",
            status=422,
        )


def _canonical_within_limit(args: dict[str, Any]) -> tuple[str, str]:
    """The arguments' canonical text and its SHA-256, or a refusal naming what is wrong with them."""
    try:
        canonical = canonical_args(args)
    except ArgsError as exc:
        raise ApprovalRefused(str(exc), code="invalid-args", status=422) from exc
    limit = settings.APPROVALS_MAX_ARGS_BYTES
    if len(canonical.encode("utf-8")) > limit:
        raise ApprovalRefused(
            f"args: {len(canonical.encode())} bytes canonical; the limit is {limit}", code="args-too-large", status=422
        )
    return canonical, hashlib.sha256(canonical.encode("utf-8")).hexdigest()  # = args_sha256(args), one pass
