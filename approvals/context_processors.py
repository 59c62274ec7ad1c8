"""`approval_counts` on every page: the signed-in approver's pending requests per tier, for the header.

`visible`: whether the header shows the approvals entry (approvers, the escalation group, safety officers,
superusers). `total` / `high` / `low` / `ungated`: the requests this person may decide. `all_pending`: every
pending request of every domain, for those who may read them all (None for everyone else)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from approvals.selectors import approver_domains, may_read_all, pending_count_all, tier_counts, user_groups
from catalog.core.roles import APPROVER


class ApprovalCounts:
    """Lazy: the count query runs only when a template reads it, and only for people who approve or read all."""

    def __init__(self, user: Any) -> None:
        self._user = user

    @cached_property
    def reads_all(self) -> bool:
        return may_read_all(self._user)

    @cached_property
    def visible(self) -> bool:
        groups = user_groups(self._user)
        return (
            bool(approver_domains(self._user))
            or APPROVER in groups
            or settings.APPROVALS_ESCALATION_GROUP in groups
            or self.reads_all
        )

    @cached_property
    def all_pending(self) -> int | None:
        return pending_count_all() if self.reads_all else None

    @cached_property
    def _counts(self) -> dict[str, int]:
        return tier_counts(self._user) if self.visible else {"high": 0, "low": 0, "ungated": 0}

    @property
    def high(self) -> int:
        return self._counts["high"]

    @property
    def low(self) -> int:
        return self._counts["low"]

    @property
    def ungated(self) -> int:
        return self._counts["ungated"]

    @property
    def total(self) -> int:
        return sum(self._counts.values())


def approval_counts(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"approval_counts": ApprovalCounts(user)}
