"""Safety officers' writes: waivers (sign-off is catalog/services/signoff.py). Each writes its audit event in the same
transaction, and refuses with a message that says what was wrong and what to do."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.core.permissions import is_safety_officer
from catalog.domain.rules import RULES
from catalog.models import Finding, Tool, Waiver

# One bulk waiver submit covers at most this many findings: a bounded transaction and a bounded page of checkboxes.
BULK_WAIVE_MAX = 500


class GovernanceRefused(Exception):
    """A refused governance action. `reason` is for the person who tried it, `field` names the input it is about
    (None: the action as a whole); `message` is `field: reason`, as the API and the command line show it."""

    def __init__(self, reason: str, *, forbidden: bool = False, field: str | None = None):
        self.reason = reason
        self.field = field
        self.message = f"{field}: {reason}" if field else reason
        self.forbidden = forbidden
        super().__init__(self.message)


def _checked_waiver(justification: str, expires_at: datetime, now: datetime) -> str:
    """The justification, stripped; refuses a blank one or an expiry outside (now, now + MAX_DAYS]."""
    justification = (justification or "").strip()
    if not justification:
        raise GovernanceRefused(_("write why this tool may break the rule for now"), field="justification")
    if expires_at <= now:
        raise GovernanceRefused(_("must be in the future"), field="expires_at")
    if expires_at > now + timedelta(days=Waiver.MAX_DAYS):
        raise GovernanceRefused(_("at most %(days)s days ahead") % {"days": Waiver.MAX_DAYS}, field="expires_at")
    return justification


def _checked_rule(rule: str) -> None:
    spec = RULES.get(rule)
    if spec is None:
        raise GovernanceRefused(_("unknown rule %(rule)r") % {"rule": rule}, field="rule")
    if not spec.waivable:
        raise GovernanceRefused(
            _("%(rule)s can never be waived; fix the declaration instead") % {"rule": rule}, field="rule"
        )


def _create(tool: Tool, rule: str, justification: str, expires_at: datetime, granted_by: Any) -> Waiver:
    waiver = Waiver.objects.create(
        tool=tool, rule=rule, justification=justification, expires_at=expires_at, granted_by=granted_by
    )
    audit_record(
        actor=Actor.for_user(granted_by),
        action=AuditAction.CATALOG_WAIVER_GRANTED,
        object_type="catalog.tool",
        object_id=str(tool),
        after={"rule": rule, "justification": justification, "expires_at": expires_at, "waiver": waiver.pk},
    )
    return waiver


def waiver_grant(*, tool_id: int, rule: str, justification: str, expires_at: datetime, granted_by: Any) -> Waiver:
    """Waive one rule for one tool until `expires_at` (at most 180 days ahead), with a justification."""
    if not is_safety_officer(granted_by):
        raise GovernanceRefused(_("only a safety officer may grant a waiver"), forbidden=True)
    _checked_rule(rule)
    now = timezone.now()
    justification = _checked_waiver(justification, expires_at, now)
    with transaction.atomic():
        tool = Tool.objects.select_for_update().get(pk=tool_id)
        current = Waiver.objects.filter(tool=tool, rule=rule).active(now).first()
        if current is not None:
            raise GovernanceRefused(
                _("%(rule)s is already waived for %(tool)s until %(until)s; revoke that waiver first")
                % {"rule": rule, "tool": tool.declared_id, "until": f"{current.expires_at:%Y-%m-%d}"},
                field="rule",
            )
        return _create(tool, rule, justification, expires_at, granted_by)


def waivers_grant_for_findings(
    *, finding_ids: Sequence[int], justification: str, expires_at: datetime, granted_by: Any
) -> list[Waiver]:
    """Waive the rule of each selected finding for its tool, with one justification and one expiry: one waiver
    and one audit event per (tool, rule), all in one transaction. Refuses the whole selection when any finding
    cannot be waived (the same rules as `waiver_grant`), so a refusal changes nothing."""
    if not is_safety_officer(granted_by):
        raise GovernanceRefused(_("only a safety officer may grant a waiver"), forbidden=True)
    ids = sorted(set(finding_ids))
    if not ids:
        raise GovernanceRefused(_("select at least one finding to waive"), field="findings")
    if len(ids) > BULK_WAIVE_MAX:
        raise GovernanceRefused(
            _("%(n)s findings selected; at most %(max)s per waiver") % {"n": len(ids), "max": BULK_WAIVE_MAX},
            field="findings",
        )
    now = timezone.now()
    justification = _checked_waiver(justification, expires_at, now)
    with transaction.atomic():
        findings = list(Finding.objects.filter(pk__in=ids).select_related("tool"))
        if len(findings) != len(ids):
            raise GovernanceRefused(
                _("some selected findings no longer exist (a newer import cleared them); reload the page"),
                field="findings",
            )
        pairs = _waivable_pairs(findings)
        tools = {t.pk: t for t in Tool.objects.select_for_update().filter(pk__in={tool_id for tool_id, _ in pairs})}
        active = set(Waiver.objects.active(now).filter(tool_id__in=tools).values_list("tool_id", "rule")) & set(pairs)
        if active:
            tool_id, rule = sorted(active)[0]
            raise GovernanceRefused(
                _("%(rule)s is already waived for %(tool)s; leave it out of the selection")
                % {"rule": rule, "tool": tools[tool_id].declared_id},
                field="findings",
            )
        return [_create(tools[tool_id], rule, justification, expires_at, granted_by) for tool_id, rule in pairs]


def _waivable_pairs(findings: list[Finding]) -> list[tuple[int, str]]:
    """The distinct (tool, rule) pairs of the findings; refuses a catalog-wide finding or a never-waivable rule."""
    pairs: set[tuple[int, str]] = set()
    for finding in findings:
        if finding.tool_id is None:
            raise GovernanceRefused(
                _("%(rule)s is about the %(system)s catalog, not one tool; only a tool's finding can be waived")
                % {"rule": finding.rule, "system": finding.system},
                field="findings",
            )
        if finding.rule not in RULES or not RULES[finding.rule].waivable:
            raise GovernanceRefused(
                _("%(rule)s can never be waived; fix the declaration instead") % {"rule": finding.rule},
                field="findings",
            )
        pairs.add((finding.tool_id, finding.rule))
    return sorted(pairs)


def waiver_revoke(*, waiver_id: int, revoked_by: Any) -> Waiver:
    if not is_safety_officer(revoked_by):
        raise GovernanceRefused(_("only a safety officer may revoke a waiver"), forbidden=True)
    with transaction.atomic():
        waiver = Waiver.objects.select_for_update().select_related("tool").get(pk=waiver_id)
        if waiver.revoked_at is not None:
            raise GovernanceRefused(_("this waiver was already revoked"))
        waiver.revoked_at = timezone.now()
        waiver.revoked_by = revoked_by
        waiver.save(update_fields=["revoked_at", "revoked_by"])
        audit_record(
            actor=Actor.for_user(revoked_by),
            action=AuditAction.CATALOG_WAIVER_REVOKED,
            object_type="catalog.tool",
            object_id=str(waiver.tool),
            before={"rule": waiver.rule, "expires_at": waiver.expires_at, "waiver": waiver.pk},
        )
    return waiver
