"""Celery tasks: they take ids, call one service, and are safe to run twice (redelivery, two beats)."""

from __future__ import annotations

from celery import shared_task

from approvals import notify
from approvals.models import ApprovalRequest
from approvals.services import approvals_escalate_overdue, approvals_expire_overdue, approvals_notify_new


@shared_task(name="approvals.tasks.notify_new")
def notify_new() -> int:
    return approvals_notify_new()


@shared_task(name="approvals.tasks.notify_escalated")
def notify_escalated(request_id: str) -> dict[str, object] | None:
    req = ApprovalRequest.objects.filter(pk=request_id).first()
    # Decided or withdrawn before the worker got to it: nobody needs to be told any more.
    if req is None or req.state != "pending":
        return None
    return notify.notify_escalated(req)


@shared_task(name="approvals.tasks.expire_overdue")
def expire_overdue() -> int:
    return approvals_expire_overdue()


@shared_task(name="approvals.tasks.escalate_overdue")
def escalate_overdue() -> int:
    return approvals_escalate_overdue()
