"""What the approvals services share: the refusal, the request's state for audit events, loading."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from celery import current_app
from django.conf import settings
from django.utils import timezone

from approvals.catalog_index import GateTool
from approvals.domain import (
    State,
    effective_state,
)
from approvals.models import ApprovalRequest
from approvals.selectors import request_get
from catalog.domain.floors import approval_domain
from catalog.models import Tool

log = logging.getLogger(__name__)

OBJECT_TYPE = "approvals.request"


class ApprovalRefused(Exception):
    """A refused approvals action. `message` is for the person or runtime that tried it; `code` is stable
    for programs to branch on; `status` is the HTTP status the API answers with."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int = 409,
        errors: list[str] | None = None,
        request: ApprovalRequest | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.errors = errors or []
        self.request = request

    @property
    def forbidden(self) -> bool:
        return self.status == 403


# --- approver domains (APPROVALS_DOMAIN_ALIASES) ---------------------------------------------------------------
# TUCAN tools declare no policy domain; their category (`prescriptions`, `appointments`) is their domain, and no
# approver group may serve it. The setting maps such a domain onto an approver domain (`medication`). One step,
# no chains: the value is the approver domain. An unmapped domain stays its own (fail closed: `approver:<domain>`).

DOMAIN_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,99}$")


def parse_aliases(raw: Any) -> tuple[dict[str, str], list[str]]:
    """The mapping and every problem with it (plain values in, for the boot check and its tests)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            return {}, [f"not valid JSON: {exc}"]
    if not isinstance(raw, Mapping):
        return {}, [f"must be a JSON object of domain → approver domain, not {type(raw).__name__}"]
    aliases: dict[str, str] = {}
    problems: list[str] = []
    for key, value in raw.items():
        if not isinstance(key, str) or not DOMAIN_NAME.match(key):
            problems.append(f"{key!r}: a domain is lower-case letters, digits, '.', '_' or '-' (at most 100)")
        elif not isinstance(value, str) or not DOMAIN_NAME.match(value):
            problems.append(f"{key}: {value!r} is not an approver domain (lower-case letters, digits, '.', '_', '-')")
        elif value in raw and raw[value] != value:
            problems.append(f"{key}: {value!r} is itself mapped (to {raw[value]!r}); name the final approver domain")
        else:
            aliases[key] = value
    return aliases, problems


@lru_cache(maxsize=4)
def _aliases(raw: str) -> dict[str, str]:
    return parse_aliases(json.loads(raw))[0]


def domain_aliases() -> dict[str, str]:
    raw = settings.APPROVALS_DOMAIN_ALIASES
    return _aliases(raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True))


def approver_domain_of(domain: str) -> str:
    """The approver domain that decides `domain`: its alias, else itself."""
    return domain_aliases().get(domain.lower(), domain) if domain else domain


def policy_domain_of(tool: GateTool | Tool) -> str:
    """The approval domain: the declared policy domain; TUCAN tools declare none, so their category; then the
    approver domain APPROVALS_DOMAIN_ALIASES maps it to (TUCAN's `prescriptions` → `medication`), if any."""
    return approver_domain_of(
        approval_domain(policy_domain=tool.policy_domain, category=tool.category, module=tool.module)
    )


def audit_state(req: ApprovalRequest) -> dict[str, Any]:
    return {
        "state": req.state,
        "tool": f"{req.tool_system}:{req.tool_declared_id}",
        "tier": req.tier_key,
        "domain": req.policy_domain,
    }


def decided_message(req: ApprovalRequest, now: datetime) -> tuple[str, str]:
    """What a second approver (or a late runtime) is told about a request that is no longer pending."""
    state = effective_state(req.state, req.expires_at, now)
    who = req.decided_by.get_username() if req.decided_by is not None else "?"
    when = timezone.localtime(req.decided_at).strftime("%Y-%m-%d %H:%M:%S") if req.decided_at else ""
    if state in (State.APPROVED, State.CONSUMED):
        return "already-decided", f"already approved by {who} at {when}"
    if state == State.REJECTED:
        return "already-decided", f"already rejected by {who} at {when}: {req.decision_reason}"
    if state == State.EXPIRED:
        return "expired", f"expired at {timezone.localtime(req.expires_at):%Y-%m-%d %H:%M:%S} without a decision"
    if state == State.CANCELLED:
        return "cancelled", "cancelled by the runtime" + (f": {req.cancel_reason}" if req.cancel_reason else "")
    return "not-pending", f"the request is {state}"


def request_by_key(idempotency_key: str) -> ApprovalRequest:
    return ApprovalRequest.objects.select_related("tool", "decided_by").get(idempotency_key=idempotency_key)


def args_from(canonical: str) -> dict[str, Any]:
    """Stored arguments are the canonical text read back (sorted keys, 2.0 stored as 2)."""
    return json.loads(canonical)


def enqueue(task_name: str, *args: Any) -> None:
    """Start a notification task after commit. A broker hiccup must never fail the runtime's call,
    whose row is already committed: log it instead. The task is looked up by its registered name in Celery's
    registry (approvals.apps registers approvals.tasks in every process): tasks call services, never the reverse."""
    try:
        current_app.tasks[f"approvals.tasks.{task_name}"].delay(*args)
    except Exception:  # any broker failure: the request itself stands
        log.exception("could not enqueue %s for approval request %s", task_name, args)


def notify_soon() -> None:
    """New requests are announced in batches by the beat task `notify_new` (every few seconds: one mail per
    domain, not one per request, and no broker round trip on the runtime's call). With no broker there is
    no beat either, so the batch runs right here, after commit."""
    if current_app.conf.task_always_eager:
        enqueue("notify_new")


def applied(req: ApprovalRequest, fields: dict[str, Any]) -> ApprovalRequest:
    """The request as a conditional UPDATE that won has just written it (.update() sets exactly these fields)."""
    for name, value in fields.items():
        setattr(req, name, value)
    return req


def load_request(request_id: Any) -> ApprovalRequest:
    req = request_get(request_id)
    if req is None:
        raise ApprovalRefused(f"no approval request {request_id}", code="not-found", status=404)
    return req
