"""The beat's acts: announce new requests, expire overdue ones, escalate long-pending ones."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from approvals import notify
from approvals.domain import (
    State,
)
from approvals.models import AllowedCall, ApprovalRequest
from approvals.services.common import (
    OBJECT_TYPE,
    enqueue,
)
from catalog.core.audit import Actor, AuditAction, audit_record

# --- notification, expiry and escalation (the beat's acts) ----------------------------------------


def approvals_notify_new(*, now: datetime | None = None, limit: int = 500) -> int:
    """Tell each domain's approvers about the requests suspended since the last run: one mail and one
    webhook post per domain. Each request is claimed once (notified_at), so two runs never both send it."""
    now = now or timezone.now()
    with transaction.atomic():
        due = ApprovalRequest.objects.filter(state=State.PENDING.value, notified_at__isnull=True).order_by("created_at")
        if connection.features.has_select_for_update_skip_locked:
            due = due.select_for_update(skip_locked=True)
        ids = list(due.values_list("pk", flat=True)[:limit])
        ApprovalRequest.objects.filter(pk__in=ids).update(notified_at=now)
    fresh = ApprovalRequest.objects.pending(now).filter(pk__in=ids).order_by("policy_domain", "expires_at")
    by_domain: dict[str, list[ApprovalRequest]] = {}
    for req in fresh:
        by_domain.setdefault(req.policy_domain, []).append(req)
    for domain, requests in by_domain.items():
        notify.notify_suspended(domain, requests)
    return sum(len(r) for r in by_domain.values())


# --- expiry and escalation -------------------------------------------------------------------------

SYSTEM_EXPIRY = Actor(label="system:approvals-expiry")
SYSTEM_ESCALATION = Actor(label="system:approvals-escalation")


def approvals_expire_overdue(*, now: datetime | None = None, batch: int = 500) -> int:
    """Mark pending requests past their expiry as expired, each with its audit event. Safe to run twice
    at once (and against a racing approver): each row changes only while it is still pending. Also forgets the
    allowed calls older than the duplicate window (nothing compares with them any more)."""
    now = now or timezone.now()
    allowed_calls_prune(now=now)
    total = 0
    while True:
        with transaction.atomic():
            ids = list(ApprovalRequest.objects.overdue(now).order_by("expires_at").values_list("pk", flat=True)[:batch])
            done = 0
            for pk in ids:
                if ApprovalRequest.objects.filter(pk=pk, state=State.PENDING.value, expires_at__lte=now).update(
                    state=State.EXPIRED.value, expired_at=now
                ):
                    audit_record(
                        actor=SYSTEM_EXPIRY,
                        action=AuditAction.APPROVALS_REQUEST_EXPIRED,
                        object_type=OBJECT_TYPE,
                        object_id=pk,
                        before={"state": State.PENDING.value},
                        after={"state": State.EXPIRED.value, "expired_at": now},
                    )
                    done += 1
        total += done
        if len(ids) < batch:
            return total


def allowed_calls_prune(*, now: datetime | None = None) -> int:
    """Drop the allowed calls remembered longer than APPROVALS_DUPLICATE_WINDOW_MINUTES: one DELETE."""
    now = now or timezone.now()
    window = timedelta(minutes=max(settings.APPROVALS_DUPLICATE_WINDOW_MINUTES, 0))
    return AllowedCall.objects.filter(created_at__lt=now - window).delete()[0]


def approvals_escalate_overdue(*, now: datetime | None = None) -> int:
    """Requests pending longer than APPROVALS_ESCALATE_AFTER_SECONDS escalate to the escalation group,
    which is told and may then decide them too. Each request escalates once."""
    now = now or timezone.now()
    group = settings.APPROVALS_ESCALATION_GROUP
    cutoff = now - timedelta(seconds=settings.APPROVALS_ESCALATE_AFTER_SECONDS)
    ids = list(
        ApprovalRequest.objects.pending(now)
        .filter(created_at__lte=cutoff, escalated_at__isnull=True)
        .values_list("pk", flat=True)[:500]
    )
    done = 0
    for pk in ids:
        with transaction.atomic():
            if ApprovalRequest.objects.filter(pk=pk, state=State.PENDING.value, escalated_at__isnull=True).update(
                escalated_at=now, escalated_to=group
            ):
                audit_record(
                    actor=SYSTEM_ESCALATION,
                    action=AuditAction.APPROVALS_REQUEST_ESCALATED,
                    object_type=OBJECT_TYPE,
                    object_id=pk,
                    after={"escalated_to": group, "escalated_at": now},
                )
                transaction.on_commit(partial(enqueue, "notify_escalated", str(pk)))
                done += 1
    return done
