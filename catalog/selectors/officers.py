"""Who may sign off: the safety officers now, and how the role moved (the audited grants and removals made in the
admin, `catalog.core.admin_audit`). Shown to the safety officers on the revisions page: a role granted to a second
account is the one change that could let one person make a quorum, so every officer sees it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model

from catalog.core import roles
from catalog.core.audit import AuditAction
from catalog.models import AuditEvent

ROLE_CHANGES_SHOWN = 10
# The newest group changes read to find them (most grant or remove other roles): a bounded read on a long log.
ROLE_CHANGES_SCANNED = 500


@dataclass(frozen=True)
class RoleChange:
    at: datetime
    username: str
    granted: bool  # False: removed
    by: str  # the audit event's actor: user:NAME


def safety_officers() -> list[str]:
    """The active accounts that hold the role, by name (one query)."""
    users = get_user_model().objects.filter(groups__name=roles.SAFETY_OFFICER, is_active=True)
    return list(users.order_by("username").values_list("username", flat=True))


def safety_officer_role_changes(limit: int = ROLE_CHANGES_SHOWN) -> list[RoleChange]:
    """The newest grants and removals of the safety-officer role, newest first (one query)."""
    added, removed = AuditAction.AUTH_USER_GROUPS_ADDED, AuditAction.AUTH_USER_GROUPS_REMOVED
    events = AuditEvent.objects.filter(action__in=(added, removed)).order_by("-created_at", "-pk")
    changes: list[RoleChange] = []
    for at, action, username, before, after, actor in events.values_list(
        "created_at", "action", "object_id", "before", "after", "actor"
    )[:ROLE_CHANGES_SCANNED]:
        groups = (after if action == added else before) or {}
        if roles.SAFETY_OFFICER in (groups.get("groups") or ()):
            changes.append(RoleChange(at, username, action == added, actor))
            if len(changes) == limit:
                break
    return changes
