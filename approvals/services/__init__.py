"""Writes for approvals. Every transition is one conditional UPDATE (exactly one writer wins, on SQLite
and on PostgreSQL alike) plus its audit event in the same transaction; notifications leave after commit.
"""

from __future__ import annotations

from approvals.services.beat import approvals_escalate_overdue, approvals_expire_overdue, approvals_notify_new
from approvals.services.common import OBJECT_TYPE, ApprovalRefused, policy_domain_of
from approvals.services.decide import approval_decide
from approvals.services.evaluate import approval_evaluate
from approvals.services.gate import Evaluation
from approvals.services.runtime import approval_cancel, approval_consume

__all__ = [
    "OBJECT_TYPE",
    "ApprovalRefused",
    "Evaluation",
    "approval_cancel",
    "approval_consume",
    "approval_decide",
    "approval_evaluate",
    "approvals_escalate_overdue",
    "approvals_expire_overdue",
    "approvals_notify_new",
    "policy_domain_of",
]
