"""Safety officers' writes to the HITL tier floors: add, change (tier and reason), remove (with a reason).

Adding a floor, raising one and rewording its reason take effect at once. Removing a floor or lowering its tier is a
weakening: one safety officer proposes it (with a reason), a second confirms it (`tier_floor_confirm`), and until
then the floor holds for the gate, the policy API and the findings exactly as before; any officer may keep the floor
instead (`tier_floor_keep`). Each write runs in one transaction with its audit event and re-lints the tier-floor
rule for every system, so the findings page agrees with the gate the moment the change commits.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.core.permissions import is_safety_officer
from catalog.domain.floors import (
    LOWER,
    REMOVE,
    change_problems,
    floor_key,
    floor_problems,
    is_lower,
    normalized_domain,
    normalized_pattern,
    reason_problems,
)
from catalog.domain.rules.floors import TIER_BELOW_FLOOR
from catalog.models import CatalogState, TierFloor, Tool
from catalog.services.findings import findings_store, lint_view_from_db

OBJECT_TYPE = "catalog.tier_floor"
PROPOSAL_FIELDS = ["proposal", "proposed_tier", "proposal_reason", "proposed_by", "proposed_at"]


class FloorRefused(Exception):
    """A refused floor change: `problems` by form field ("" for the whole change), `forbidden` for a role."""

    def __init__(self, problems: dict[str, str], *, forbidden: bool = False) -> None:
        super().__init__("; ".join(f"{k}: {v}" if k else v for k, v in problems.items()))
        self.problems = problems
        self.message = str(self)
        self.forbidden = forbidden


def _officer(user: Any, what: str) -> None:
    if not is_safety_officer(user):
        raise FloorRefused({"": f"only a safety officer may {what} a tier floor"}, forbidden=True)


def audit_state(floor: TierFloor) -> dict[str, Any]:
    state: dict[str, Any] = {
        "key": floor.key,
        "policy_domain": floor.policy_domain or None,
        "pattern": floor.pattern or None,
        "system": floor.system or None,
        "min_tier": floor.min_tier,
        "reason": floor.reason,
    }
    if floor.proposal:
        state["proposal"] = {
            "what": floor.proposal,
            "tier": floor.proposed_tier or None,
            "reason": floor.proposal_reason,
            "by": floor.proposed_by.get_username() if floor.proposed_by else None,
        }
    return state


def tier_floor_add(
    *, policy_domain: str, pattern: str, system: str, min_tier: str, reason: str, created_by: Any
) -> TierFloor:
    """A new floor: by policy domain or by tool-id pattern (not both), for one system or both."""
    _officer(created_by, "add")
    fields = {
        "policy_domain": normalized_domain(policy_domain),
        "pattern": normalized_pattern(pattern),
        "system": (system or "").strip(),
        "min_tier": (min_tier or "").strip(),
        "reason": (reason or "").strip(),
    }
    problems = floor_problems(**fields)
    if problems:
        raise FloorRefused(problems)
    key = floor_key(policy_domain=fields["policy_domain"], pattern=fields["pattern"], system=fields["system"])
    try:
        with transaction.atomic():
            now = _stamp()
            floor = TierFloor.objects.create(
                **fields, created_by=created_by, updated_by=created_by, created_at=now, updated_at=now
            )
            _audited(created_by, AuditAction.CATALOG_TIER_FLOOR_ADDED, key, None, audit_state(floor))
            _relint()
    except IntegrityError as exc:  # the unique constraint: checked by the database, race-free
        field = "policy_domain" if fields["policy_domain"] else "pattern"
        raise FloorRefused({field: f"the floor {key} exists already: change its tier instead"}) from exc
    return floor


def tier_floor_change(*, floor_id: int, min_tier: str, reason: str, changed_by: Any) -> TierFloor:
    """A floor's new tier and the reason for it (what it matches is its identity: remove it and add another).
    Raising it or rewording the reason takes effect at once; a lower tier is proposed (`floor.proposal` is set on
    the floor returned) and waits for a second officer."""
    _officer(changed_by, "change")
    min_tier, reason = (min_tier or "").strip(), (reason or "").strip()
    problems = change_problems(min_tier=min_tier, reason=reason)
    if problems:
        raise FloorRefused(problems)
    with transaction.atomic():
        now = _stamp()
        floor = _locked(floor_id)
        if is_lower(min_tier, floor.min_tier):
            _propose(floor, LOWER, tier=min_tier, reason=reason, by=changed_by, now=now)
            return floor
        before = audit_state(floor)
        if (floor.min_tier, floor.reason) == (min_tier, reason):
            return floor  # nothing changes: no event, no new version
        floor.min_tier, floor.reason = min_tier, reason
        floor.updated_at, floor.updated_by = now, changed_by
        floor.save(update_fields=["min_tier", "reason", "updated_at", "updated_by"])
        _audited(changed_by, AuditAction.CATALOG_TIER_FLOOR_CHANGED, floor.key, before, audit_state(floor))
        _relint()
    return floor


def tier_floor_remove(*, floor_id: int, reason: str, removed_by: Any) -> TierFloor:
    """Propose removing a floor, saying why; a second officer confirms it. Returns the floor, which holds until then."""
    _officer(removed_by, "remove")
    reason = (reason or "").strip()
    problems = reason_problems(reason, missing="write why the tools this floor catches no longer need it")
    if problems:
        raise FloorRefused(problems)
    with transaction.atomic():
        now = _stamp()
        floor = _locked(floor_id)
        _propose(floor, REMOVE, tier="", reason=reason, by=removed_by, now=now)
    return floor


def _propose(floor: TierFloor, what: str, *, tier: str, reason: str, by: Any, now: datetime) -> None:
    """Record a weakening of `floor` (locked) for a second officer; nothing the gate reads changes."""
    if floor.proposal:
        raise FloorRefused(
            {
                "": f"{floor.key}: {_proposal_text(floor)} awaits a second safety officer; confirm it "
                "or keep the floor first"
            }
        )
    before = audit_state(floor)
    floor.proposal, floor.proposed_tier, floor.proposal_reason = what, tier, reason
    floor.proposed_by, floor.proposed_at = by, now
    floor.save(update_fields=PROPOSAL_FIELDS)
    _audited(by, AuditAction.CATALOG_TIER_FLOOR_WEAKENING_PROPOSED, floor.key, before, audit_state(floor))


def _has_proposal(floor: TierFloor) -> None:
    if not floor.proposal:
        raise FloorRefused({"": f"{floor.key}: nothing awaits confirmation (kept or confirmed meanwhile)"})


def _proposal_text(floor: TierFloor) -> str:
    who = floor.proposed_by.get_username() if floor.proposed_by else "?"
    what = "the removal" if floor.proposal == REMOVE else f"lowering it to {floor.proposed_tier}"
    return f"{what} {who} proposed"


def tier_floor_confirm(*, floor_id: int, confirmed_by: Any) -> tuple[str, str]:
    """A second safety officer confirms the proposed removal or lowering: it takes effect now. Returns the floor's
    key and what was confirmed (`remove` or `lower`). Refused to the officer who proposed it."""
    _officer(confirmed_by, "confirm a change to")
    with transaction.atomic():
        now = _stamp()
        floor = _locked(floor_id)
        what, key = floor.proposal, floor.key
        _has_proposal(floor)
        if floor.proposed_by_id == confirmed_by.pk:
            raise FloorRefused({"": f"{key}: a second safety officer confirms what you proposed"}, forbidden=True)
        before = audit_state(floor)
        decided = {"proposed_by": before["proposal"]["by"], "confirmed_by": confirmed_by.get_username()}
        if what == REMOVE:
            floor.delete()
            after = {"removal_reason": before["proposal"]["reason"], **decided}
            action = AuditAction.CATALOG_TIER_FLOOR_REMOVED
        else:
            floor.min_tier, floor.reason = floor.proposed_tier, floor.proposal_reason
            _clear(floor)
            floor.updated_at, floor.updated_by = now, confirmed_by
            floor.save()
            after = {**audit_state(floor), **decided}
            action = AuditAction.CATALOG_TIER_FLOOR_CHANGED
        _audited(confirmed_by, action, key, before, after)
        _relint()
    return key, what


def tier_floor_keep(*, floor_id: int, kept_by: Any) -> TierFloor:
    """Keep the floor as it is: the proposed removal or lowering is withdrawn (any safety officer, its proposer too)."""
    _officer(kept_by, "keep")
    with transaction.atomic():
        _stamp()
        floor = _locked(floor_id)
        _has_proposal(floor)
        before = audit_state(floor)
        _clear(floor)
        floor.save(update_fields=PROPOSAL_FIELDS)
        _audited(kept_by, AuditAction.CATALOG_TIER_FLOOR_KEPT, floor.key, before, audit_state(floor))
    return floor


def _audited(by: Any, action: AuditAction, key: str, before: dict[str, Any] | None, after: dict[str, Any]) -> None:
    """The floor change's audit event, in the caller's transaction."""
    audit_record(
        actor=Actor.for_user(by), action=action, object_type=OBJECT_TYPE, object_id=key, before=before, after=after
    )


def _clear(floor: TierFloor) -> None:
    floor.proposal, floor.proposed_tier, floor.proposal_reason = "", "", ""
    floor.proposed_by, floor.proposed_at = None, None


def _stamp() -> datetime:
    """Serialise floor writes and give this one a time after every committed change.

    The floors' version is (row count, newest `updated_at`): a change stamped earlier than the newest one (a
    slower clock on another host, or a transaction that began first and commits last) would leave the version
    as it was and every process would keep the old floors. Locking every floor row first orders the writers."""
    locked = list(TierFloor.objects.select_for_update().values_list("updated_at", flat=True))
    now = timezone.now()
    newest = max(locked, default=now)
    return max(now, newest + timedelta(microseconds=1))


def _locked(floor_id: int) -> TierFloor:
    floor = TierFloor.objects.select_for_update().filter(pk=floor_id).first()
    if floor is None:
        raise FloorRefused({"": f"no tier floor {floor_id}: it may have been removed meanwhile"})
    return floor


def _relint() -> None:
    """The tier-floor rule's findings of every imported system, recomputed against the changed table."""
    for state in CatalogState.objects.select_related("current_revision").filter(current_revision__isnull=False):
        assert state.current_revision is not None
        pks = dict(Tool.objects.filter(system=state.system).live().values_list("declared_id", "pk"))
        findings_store(
            view=lint_view_from_db(state.system),
            revision=state.current_revision,
            tool_pks=pks,
            only=[TIER_BELOW_FLOOR],
        )
