"""Safety officers' writes: waivers (sign-off is catalog/services/signoff.py). Each writes its audit event in the same
transaction, and refuses with a message that says what was wrong and what to do."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from catalog.core.audit import Actor, audit_record
from catalog.core.permissions import is_safety_officer
from catalog.domain.rules import RULES
from catalog.models import Tool, Waiver


class GovernanceRefused(Exception):
    """A refused governance action; `message` is for the person who tried it."""

    def __init__(self, message: str, *, forbidden: bool = False):
        super().__init__(message)
        self.message = message
        self.forbidden = forbidden


def waiver_grant(*, tool_id: int, rule: str, justification: str, expires_at: datetime, granted_by: Any) -> Waiver:
    """Waive one rule for one tool until `expires_at` (at most 180 days ahead), with a justification."""
    if not is_safety_officer(granted_by):
        raise GovernanceRefused("only a safety officer may grant a waiver", forbidden=True)
    spec = RULES.get(rule)
    if spec is None:
        raise GovernanceRefused(f"rule: unknown rule {rule!r}")
    if not spec.waivable:
        raise GovernanceRefused(f"rule: {rule} can never be waived; fix the declaration instead")
    justification = (justification or "").strip()
    if not justification:
        raise GovernanceRefused("justification: write why this tool may break the rule for now")
    now = timezone.now()
    if expires_at <= now:
        raise GovernanceRefused("expires_at: must be in the future")
    if expires_at > now + timedelta(days=Waiver.MAX_DAYS):
        raise GovernanceRefused(f"expires_at: at most {Waiver.MAX_DAYS} days ahead")
    with transaction.atomic():
        tool = Tool.objects.select_for_update().get(pk=tool_id)
        current = Waiver.objects.filter(tool=tool, rule=rule).active(now).first()
        if current is not None:
            raise GovernanceRefused(
                f"{rule} is already waived for {tool.declared_id} until {current.expires_at:%Y-%m-%d}; "
                "revoke that waiver first"
            )
        waiver = Waiver.objects.create(
            tool=tool, rule=rule, justification=justification, expires_at=expires_at, granted_by=granted_by
        )
        audit_record(
            actor=Actor.for_user(granted_by),
            action="catalog.waiver.granted",
            object_type="catalog.tool",
            object_id=str(tool),
            after={"rule": rule, "justification": justification, "expires_at": expires_at, "waiver": waiver.pk},
        )
    return waiver


def waiver_revoke(*, waiver_id: int, revoked_by: Any) -> Waiver:
    if not is_safety_officer(revoked_by):
        raise GovernanceRefused("only a safety officer may revoke a waiver", forbidden=True)
    with transaction.atomic():
        waiver = Waiver.objects.select_for_update().select_related("tool").get(pk=waiver_id)
        if waiver.revoked_at is not None:
            raise GovernanceRefused("this waiver was already revoked")
        waiver.revoked_at = timezone.now()
        waiver.revoked_by = revoked_by
        waiver.save(update_fields=["revoked_at", "revoked_by"])
        audit_record(
            actor=Actor.for_user(revoked_by),
            action="catalog.waiver.revoked",
            object_type="catalog.tool",
            object_id=str(waiver.tool),
            before={"rule": waiver.rule, "expires_at": waiver.expires_at, "waiver": waiver.pk},
        )
    return waiver
