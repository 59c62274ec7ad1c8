"""HITL approval requests: one suspended tool call, its decision, and its single use.

Transitions are written only by `approvals/services.py`, each with a conditional UPDATE (so two
approvers, or an approver and the expiry task, can never both win) and an audit event in the same
transaction. The constraints below restate the invariants so that a row edited behind the services'
back cannot claim, say, an approval without an approver or a hash.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from approvals.domain import HIGH, LOW, UNGATED, DispatchMode, State, effective_state
from catalog.domain.vocabulary import SYSTEM_MAX
from catalog.models import Tool

TIER_KEYS = (HIGH, LOW, UNGATED)


def _choices(values: Iterable[object]) -> list[tuple[str, str]]:
    return [(str(v), str(v)) for v in values]


class ApprovalRequestQuerySet(models.QuerySet["ApprovalRequest"]):
    def pending(self, now: datetime | None = None) -> ApprovalRequestQuerySet:
        """Pending and not yet past due: what approvers may still decide."""
        return self.filter(state=State.PENDING.value, expires_at__gt=now or timezone.now())

    def overdue(self, now: datetime | None = None) -> ApprovalRequestQuerySet:
        return self.filter(state=State.PENDING.value, expires_at__lte=now or timezone.now())


class ApprovalRequest(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    idempotency_key = models.CharField(
        max_length=200, unique=True, help_text="the runtime's key: a resubmit returns this request, never a second"
    )
    submitted_via = models.CharField(max_length=200, help_text="the API token that submitted it")
    console_origin = models.CharField(
        max_length=300,
        blank=True,
        help_text="scheme and host the evaluate call reached the console on: the worker's notification links",
    )
    # --- the call ---
    tool = models.ForeignKey(Tool, on_delete=models.PROTECT, related_name="+")
    tool_system = models.CharField(max_length=SYSTEM_MAX)
    tool_declared_id = models.CharField(max_length=200)
    requested_name = models.CharField(max_length=200, help_text="the spelling the runtime sent")
    profile = models.CharField(max_length=100)
    dispatch_mode = models.CharField(max_length=20, choices=_choices(DispatchMode))
    run_id = models.CharField(max_length=200)
    requested_by = models.CharField(max_length=200, help_text="who asked; may not decide this request")
    patient_ref = models.CharField(max_length=200, blank=True)
    tool_call_id = models.CharField(
        max_length=200, blank=True, db_index=True, help_text="the runtime's tool call id (gen_ai.tool.call.id)"
    )
    candidate_set_id = models.CharField(max_length=40, blank=True, help_text="the candidate set the run called from")
    proposed_args = models.JSONField(help_text="canonical form (sorted keys)")
    proposed_sha256 = models.CharField(max_length=64)
    # --- the policy at the time of the request (the catalog may change while it waits) ---
    policy_domain = models.CharField(
        max_length=100, help_text="the tool's policy domain; for TUCAN tools (which have none) its category"
    )
    hitl_tier = models.CharField("HITL tier", max_length=10, null=True, blank=True)  # noqa: DJ001 - unset is NULL
    tier_key = models.CharField(max_length=10, choices=_choices(TIER_KEYS), help_text="high, low, or ungated")
    flagged = models.BooleanField(default=False, help_text="an ungated mutation: suspended because it has no tier")
    policy_reason = models.CharField(max_length=40)
    # --- lifecycle ---
    state = models.CharField(max_length=12, choices=_choices(State), default=State.PENDING.value)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decision_reason = models.TextField(blank=True)
    approved_args = models.JSONField(null=True, blank=True, help_text="what may run: the proposal or the edit")
    approved_sha256 = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001 - unset is NULL
    args_edited = models.BooleanField(default=False)
    consumable_until = models.DateTimeField(null=True, blank=True)
    consumed_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.TextField(blank=True)
    expired_at = models.DateTimeField(null=True, blank=True)
    notified_at = models.DateTimeField(null=True, blank=True, help_text="when the domain's approvers were told")
    escalated_at = models.DateTimeField(null=True, blank=True)
    escalated_to = models.CharField(max_length=150, blank=True, help_text="the group the request escalated to")
    # --- a possible duplicate: an earlier call with the same tool, patient and arguments under another key ---
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="the earlier request"
    )
    duplicate_allowed_at = models.DateTimeField(
        null=True, blank=True, help_text="when the earlier call it repeats was allowed (no request of its own)"
    )

    objects = ApprovalRequestQuerySet.as_manager()

    class Meta:
        ordering = ["expires_at"]
        indexes = [
            models.Index(fields=["state", "policy_domain", "expires_at"], name="approval_queue_idx"),
            models.Index(fields=["state", "expires_at"], name="approval_due_idx"),
            models.Index(fields=["decided_at"], name="approval_decided_idx"),
            models.Index(fields=["state", "created_at"], name="approval_escalation_idx"),
            models.Index(fields=["created_at"], condition=Q(notified_at__isnull=True), name="approval_unnotified_idx"),
            models.Index(fields=["tool", "patient_ref", "created_at"], name="approval_duplicate_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(state__in=[s.value for s in State]), name="approval_state_valid"),
            models.CheckConstraint(condition=Q(tier_key__in=TIER_KEYS), name="approval_tier_key_valid"),
            models.CheckConstraint(
                condition=Q(dispatch_mode__in=[m.value for m in DispatchMode]), name="approval_dispatch_mode_valid"
            ),
            # Fail closed is visible: flagged exactly when the mutation had no tier.
            models.CheckConstraint(
                condition=(Q(flagged=True) & Q(tier_key=UNGATED)) | (Q(flagged=False) & ~Q(tier_key=UNGATED)),
                name="approval_flagged_iff_ungated",
            ),
            # An approval (and so a consumption) names its approver and the hash that may run.
            models.CheckConstraint(
                condition=~Q(state__in=[State.APPROVED.value, State.CONSUMED.value])
                | (
                    Q(decided_by__isnull=False)
                    & Q(decided_at__isnull=False)
                    & Q(approved_sha256__isnull=False)
                    & Q(approved_args__isnull=False)
                    & Q(consumable_until__isnull=False)
                ),
                name="approval_approved_is_complete",
            ),
            models.CheckConstraint(
                condition=~Q(state=State.REJECTED.value)
                | (Q(decided_by__isnull=False) & Q(decided_at__isnull=False) & ~Q(decision_reason="")),
                name="approval_rejected_has_reason",
            ),
            models.CheckConstraint(
                condition=~Q(state=State.CONSUMED.value) | Q(consumed_at__isnull=False),
                name="approval_consumed_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool_declared_id} for {self.patient_ref or 'no patient'} ({self.short_id})"

    @property
    def short_id(self) -> str:
        return str(self.id)[:8]

    def state_at(self, now: datetime | None = None) -> str:
        return effective_state(self.state, self.expires_at, now or timezone.now())

    @property
    def duplicate_short_id(self) -> str:
        return str(self.duplicate_of_id)[:8] if self.duplicate_of_id else ""

    @property
    def possible_duplicate(self) -> bool:
        return self.duplicate_of_id is not None or self.duplicate_allowed_at is not None

    @property
    def current_state(self) -> str:
        return self.state_at()

    @property
    def latency(self) -> timedelta | None:
        """Decision latency: from suspension to the approver's decision."""
        return self.decided_at - self.created_at if self.decided_at else None

    @property
    def seconds_left(self) -> int:
        return max(0, int((self.expires_at - timezone.now()).total_seconds()))


class AllowedCall(models.Model):
    """A mutating call the gate allowed (tier low, the person in the chat) for a patient, remembered for
    APPROVALS_DUPLICATE_WINDOW_MINUTES so that the same call again under another idempotency key is seen as a
    possible duplicate (an allowed call leaves no request to compare with). Pruned by the beat's expiry run."""

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="+")
    patient_ref = models.CharField(max_length=200)
    args_sha256 = models.CharField(max_length=64)
    idempotency_key = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            # A retry of one allowed call is remembered once; the lookup reads this index's prefix.
            models.UniqueConstraint(
                fields=["tool", "patient_ref", "args_sha256", "idempotency_key"], name="allowed_call_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool_id} for {self.patient_ref} at {self.created_at:%H:%M:%S} ({self.idempotency_key})"
