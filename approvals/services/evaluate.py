"""The runtime's question: may this tool call run now? (allow, suspend as an approval request, refuse)"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from approvals.catalog_index import GateTool, catalog_index
from approvals.domain import (
    UNGATED,
    ArgsError,
    Decision,
    PolicyOutcome,
    canonical_args,
    identity_key,
    replay_conflict,
    replay_differences,
    request_ttl,
    suspend_policy,
)
from approvals.models import ApprovalRequest
from approvals.schema import schema_errors
from approvals.selectors import tool_lookup
from approvals.services.common import (
    OBJECT_TYPE,
    ApprovalRefused,
    args_from,
    audit_state,
    notify_soon,
    policy_domain_of,
    request_by_key,
)
from catalog.core.audit import Actor, audit_record
from catalog.domain.effect import floored_tier
from catalog.domain.floors import floor_for
from catalog.domain.keys import canonical_key
from catalog.domain.profiles import is_plan_eligible
from catalog.models import Tool
from catalog.selectors.floors import tier_floors

# --- evaluate (the runtime's question) -------------------------------------------------------------


@dataclass
class Evaluation:
    decision: str
    reason: str
    message: str
    tool: GateTool | Tool | None = None
    request: ApprovalRequest | None = None
    created: bool = False
    candidates: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Call:
    """What a replay of this call must repeat, beside its idempotency key."""

    key: str
    tool_name: str
    sha: str  # of the canonical arguments
    profile: str
    dispatch_mode: str
    run_id: str
    requested_by: str
    patient_ref: str


def _replay(existing: ApprovalRequest, call: _Call) -> Evaluation:
    """The same idempotency key again: the same request if this is the same call (a retry), else a 409 that
    names what differs. A replay answers with the whole request, patient included, so only a call that repeats
    all of it (tool, arguments, profile, dispatch mode, run, requester, patient) may have it."""
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
    }
    again = {
        "tool": same_tool,
        "args": call.sha,
        "profile": call.profile,
        "dispatchMode": call.dispatch_mode,
        "runId": call.run_id,
        "requestedBy": call.requested_by,
        "patientRef": call.patient_ref,
    }
    differs = replay_differences(first, again)
    if differs:
        message, errors = replay_conflict(call.key, existing.tool_declared_id, differs)
        # No `request` in the answer: it is the first call's, and this caller has not shown it is theirs.
        raise ApprovalRefused(message, code="idempotency-key-reused", status=409, errors=errors)
    return Evaluation(Decision.SUSPEND.value, existing.policy_reason, "replayed", existing.tool, existing, False)


def _replay_or(result: Evaluation, call: _Call) -> Evaluation:
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
    now: datetime | None = None,
) -> Evaluation:
    """May this call run now? Allow, suspend (one request per idempotency key, however many submits
    race) or refuse. Raises ApprovalRefused for requests the runtime must fix (status 409/422).

    The idempotency key is enforced by the unique index: a suspending call inserts optimistically and a
    duplicate key turns into a replay. Calls that would not insert (allow, refuse, invalid) look the key up,
    so a retry still gets its request back after the catalog changed under it.
    """
    now = now or timezone.now()
    canonical, sha = _canonical_within_limit(args)
    _check_requester(requested_by)
    call = _Call(
        key=idempotency_key,
        tool_name=tool_name,
        sha=sha,
        profile=profile,
        dispatch_mode=dispatch_mode,
        run_id=run_id,
        requested_by=requested_by,
        patient_ref=patient_ref,
    )
    try:
        gate = _gate(tool_name=tool_name, system=system, profile=profile, dispatch_mode=dispatch_mode, args=args)
        if isinstance(gate, Evaluation):  # allow or refuse: nothing to insert
            return _replay_or(gate, call)
        tool, outcome = gate
        ttl = _ttl(outcome.tier_key or UNGATED, ttl_seconds)
    except ApprovalRefused as refusal:
        refused = Evaluation(Decision.REFUSE.value, refusal.code, refusal.message)
        replayed = _replay_or(refused, call)
        if replayed.request is not None:
            return replayed
        raise
    req = _new_request(tool, outcome, ttl=ttl, now=now, canonical=canonical, call=call, via=via)
    try:
        _suspend(req, via=via)
    except IntegrityError:
        # This key was used before (a retry), or another submit with it committed first: its request answers.
        return _replay(request_by_key(idempotency_key), call)
    return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool, req, True)


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


def _new_request(
    tool: GateTool, outcome: PolicyOutcome, *, ttl: int, now: datetime, canonical: str, call: _Call, via: str
) -> ApprovalRequest:
    """The request a suspending call becomes: the call as the runtime sent it, the tool and the gate's outcome."""
    return ApprovalRequest(
        idempotency_key=call.key,
        submitted_via=via,
        requested_name=call.tool_name,
        profile=call.profile,
        dispatch_mode=call.dispatch_mode,
        run_id=call.run_id,
        requested_by=call.requested_by,
        patient_ref=call.patient_ref,
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


def _ttl(tier_key: str, requested: int | None) -> int:
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


def _suspend(req: ApprovalRequest, *, via: str) -> None:
    """Insert the request with its audit event; IntegrityError when its idempotency key is taken."""
    with transaction.atomic():
        req.save(force_insert=True)
        audit_record(
            actor=Actor.for_token(via),
            action="approvals.request.suspended",
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
            },
        )
        transaction.on_commit(notify_soon)


def _check_args(args: dict[str, Any], tool: GateTool, label: str) -> None:
    """ApprovalRefused when the arguments do not match the input schema the profile is served."""
    problems = schema_errors(args, tool.input_schema)
    if problems:
        raise ApprovalRefused(
            f"args do not match the input schema of {label}: {len(problems)} problem(s)",
            code="invalid-args",
            status=422,
            errors=problems,
        )


def _awaiting(tool: GateTool, label: str, profile: str) -> Evaluation:
    return Evaluation(
        Decision.REFUSE.value,
        "awaiting-signoff",
        f"{label} is new and awaits a safety officer's sign-off: it does not exist under clinical profile "
        f"{profile!r} until then",
        tool=tool,
    )


def _with_floor(tool: GateTool) -> GateTool:
    """A mutating tool's tier raised to the safety officers' floors (`floored_tier`)."""
    if not tool.is_mutating:
        return tool
    floor, _ = floor_for(
        declared_id=tool.declared_id,
        llm_name=tool.llm_name,
        canonical_key=tool.canonical_key,
        system=tool.system,
        policy_domain=tool.policy_domain,
        module=tool.module,
        category=tool.category,
        floors=tier_floors(),
    )
    tier = floored_tier(tool.hitl_tier, floor)
    return tool if tier == tool.hitl_tier else replace(tool, hitl_tier=tier)


def _gate(
    *, tool_name: str, system: str | None, profile: str, dispatch_mode: str, args: dict[str, Any]
) -> Evaluation | tuple[GateTool, PolicyOutcome]:
    """The suspend policy applied to the catalog: an Evaluation to answer with (allow, refuse), or the tool
    and the policy outcome of a call that suspends. Raises ApprovalRefused for arguments the schema refuses."""
    index = catalog_index()
    match = tool_lookup(tool_name, system=system, index=index)
    if match.ambiguous:
        names = [f"{t.system}:{t.declared_id}" for t in match.candidates]
        return Evaluation(
            Decision.REFUSE.value,
            "ambiguous-tool",
            f"tool {tool_name!r} matches {len(names)} live tools ({', '.join(names)}); "
            "send the exact declared id, or `system` to choose",
            candidates=names,
        )
    tool = match.tool
    profile_row = index.profiles.get(profile)
    if profile_row is None:
        known = ", ".join(sorted(index.profiles)) or "none"
        return Evaluation(
            Decision.REFUSE.value,
            "unknown-profile",
            f"profile {profile!r} is not a catalog profile (known: {known})",
            tool=tool,
        )
    label = f"{tool.system}:{tool.declared_id}" if tool else repr(tool_name)
    if tool is not None:
        served = index.served(tool, clinical=profile_row.clinical)
        if served is None:
            return _awaiting(tool, label, profile)
        tool = _with_floor(served)
    outcome = suspend_policy(
        known=tool is not None,
        plan_eligible=tool is not None
        and is_plan_eligible(
            plane=tool.plane,
            availability=tool.availability,
            declared_id=tool.declared_id,
            profile_availabilities=profile_row.availabilities,
            profile_includes=profile_row.includes,
        ),
        effective_policy_class=tool.effective_policy_class if tool else None,
        is_mutating=tool.is_mutating if tool else False,
        hitl_tier=tool.hitl_tier if tool else None,
        dispatch_mode=dispatch_mode,
        tool=label,
        profile=profile,
    )
    if outcome.decision == Decision.REFUSE:
        return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)
    assert tool is not None
    _check_args(args, tool, label)
    if outcome.decision == Decision.ALLOW:
        return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)
    return tool, outcome
