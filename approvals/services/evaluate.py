"""The runtime's question: may this tool call run now? (allow, suspend as an approval request, refuse)"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from approvals.catalog_index import ToolSnapshot, catalog_index
from approvals.domain import (
    UNGATED,
    ArgsError,
    Decision,
    canonical_args,
    request_ttl,
    suspend_policy,
)
from approvals.models import ApprovalRequest
from approvals.schema import schema_errors
from approvals.selectors import tool_resolve
from approvals.services.common import (
    OBJECT_TYPE,
    ApprovalRefused,
    args_from,
    notify_soon,
    request_by_key,
    snapshot,
    tool_domain,
)
from catalog.core.audit import Actor, audit_record
from catalog.domain.keys import canonical_key
from catalog.domain.profiles import is_plan_eligible
from catalog.models import Tool

# --- evaluate (the runtime's question) -------------------------------------------------------------


@dataclass
class Evaluation:
    decision: str
    reason: str
    message: str
    tool: ToolSnapshot | Tool | None = None
    request: ApprovalRequest | None = None
    created: bool = False
    candidates: list[str] = field(default_factory=list)


def _replay(existing: ApprovalRequest, *, tool_name: str, sha: str, key: str) -> Evaluation:
    """The same idempotency key again: the same request, or a 409 if it now means a different call."""
    same_tool = canonical_key(tool_name) in {
        canonical_key(existing.requested_name),
        canonical_key(existing.tool_declared_id),
    }
    if not same_tool or sha != existing.proposed_sha256:
        what = "tool" if not same_tool else "arguments"
        raise ApprovalRefused(
            f"idempotencyKey {key!r} was already used for {existing.tool_declared_id} with arguments sha256 "
            f"{existing.proposed_sha256}; this call has a different {what} "
            f"({tool_name}, sha256 {sha}): a new call needs a new idempotency key",
            code="idempotency-key-reused",
            status=409,
            request=existing,
        )
    return Evaluation(Decision.SUSPEND.value, existing.policy_reason, "replayed", existing.tool, existing, False)


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
    try:
        canonical = canonical_args(args)
    except ArgsError as exc:
        raise ApprovalRefused(str(exc), code="invalid-args", status=422) from exc
    limit = settings.APPROVALS_MAX_ARGS_BYTES
    if len(canonical.encode("utf-8")) > limit:
        raise ApprovalRefused(
            f"args: {len(canonical.encode())} bytes canonical; the limit is {limit}", code="args-too-large", status=422
        )
    sha = hashlib.sha256(canonical.encode("utf-8")).hexdigest()  # = args_sha256(args), without a second pass

    def replay_or(result: Evaluation) -> Evaluation:
        if ApprovalRequest.objects.filter(idempotency_key=idempotency_key).exists():
            return _replay(request_by_key(idempotency_key), tool_name=tool_name, sha=sha, key=idempotency_key)
        return result

    try:
        gate = _gate(tool_name=tool_name, system=system, profile=profile, dispatch_mode=dispatch_mode, args=args)
        if isinstance(gate, Evaluation):  # allow or refuse: nothing to insert
            return replay_or(gate)
        tool, outcome = gate
        tier_key = outcome.tier_key or UNGATED
        try:
            ttl = request_ttl(
                tier_key=tier_key,
                requested=ttl_seconds,
                defaults=settings.APPROVALS_TTL_SECONDS,
                minimum=settings.APPROVALS_TTL_MIN_SECONDS,
                maxima=settings.APPROVALS_TTL_MAX_SECONDS,
            )
        except ValueError as exc:
            raise ApprovalRefused(str(exc), code="invalid-ttl", status=422) from exc
    except ApprovalRefused as refusal:
        replayed = replay_or(Evaluation(Decision.REFUSE.value, refusal.code, refusal.message))
        if replayed.request is not None:
            return replayed
        raise
    req = ApprovalRequest(
        idempotency_key=idempotency_key,
        submitted_via=via,
        tool_id=tool.pk,
        tool_system=tool.system,
        tool_declared_id=tool.declared_id,
        requested_name=tool_name,
        profile=profile,
        dispatch_mode=dispatch_mode,
        run_id=run_id,
        requested_by=requested_by,
        patient_ref=patient_ref,
        proposed_args=args_from(canonical),
        proposed_sha256=sha,
        policy_domain=tool_domain(tool),
        hitl_tier=tool.hitl_tier,
        tier_key=tier_key,
        flagged=outcome.flagged,
        policy_reason=outcome.reason,
        created_at=now,
        expires_at=now + timedelta(seconds=ttl),
    )
    try:
        with transaction.atomic():
            req.save(force_insert=True)
            audit_record(
                actor=Actor.for_token(via),
                action="approvals.request.suspended",
                object_type=OBJECT_TYPE,
                object_id=req.pk,
                after={
                    **snapshot(req),
                    "flagged": req.flagged,
                    "dispatch_mode": dispatch_mode,
                    "requested_by": requested_by,
                    "patient_ref": patient_ref,
                    "args_sha256": sha,
                    "expires_at": req.expires_at,
                    "idempotency_key": idempotency_key,
                },
            )
            transaction.on_commit(notify_soon)
    except IntegrityError:
        # This key was used before (a retry), or another submit with it committed first: its request answers.
        return _replay(request_by_key(idempotency_key), tool_name=tool_name, sha=sha, key=idempotency_key)
    return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool, req, True)


def _gate(
    *, tool_name: str, system: str | None, profile: str, dispatch_mode: str, args: dict[str, Any]
) -> Evaluation | tuple[ToolSnapshot, Any]:
    """The suspend policy applied to the catalog: an Evaluation to answer with (allow, refuse), or the tool
    and the policy outcome of a call that suspends. Raises ApprovalRefused for arguments the schema refuses."""
    index = catalog_index()
    resolution = tool_resolve(tool_name, system=system, index=index)
    if resolution.ambiguous:
        names = [f"{t.system}:{t.declared_id}" for t in resolution.candidates]
        return Evaluation(
            Decision.REFUSE.value,
            "ambiguous-tool",
            f"tool {tool_name!r} matches {len(names)} live tools ({', '.join(names)}); "
            "send the exact declared id, or `system` to choose",
            candidates=names,
        )
    tool = resolution.tool
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
    problems = schema_errors(args, tool.input_schema)
    if problems:
        raise ApprovalRefused(
            f"args do not match the input schema of {label}: {len(problems)} problem(s)",
            code="invalid-args",
            status=422,
            errors=problems,
        )
    if outcome.decision == Decision.ALLOW:
        return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)
    return tool, outcome
