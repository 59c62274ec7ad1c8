"""Writing and verifying the hash-chained audit log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from ..models import AuditChainHead, AuditEvent
from ..models.audit import GENESIS_HASH


@dataclass(frozen=True)
class Actor:
    """Who did it: a person (user), a service (token) or the system, as one readable label."""

    label: str
    user: AbstractBaseUser | None = None

    @classmethod
    def for_user(cls, user: AbstractBaseUser) -> Actor:
        return cls(label=f"user:{user.get_username()}", user=user)

    @classmethod
    def for_token(cls, token_name: str) -> Actor:
        return cls(label=f"token:{token_name}")


def audit_record(
    *, actor: Actor, action: str, object_type: str, object_id: str | int, before: Any = None, after: Any = None
) -> AuditEvent:
    """Append one event. Must run inside the transaction of the change it records."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit_record must run inside the transaction of the change it records")
    AuditChainHead.objects.get_or_create(singleton=True)
    # The head row serialises appends: the chain never forks, and ids stay contiguous (a gap is a deletion).
    head = AuditChainHead.objects.select_for_update().get(singleton=True)
    event = AuditEvent(
        pk=head.last_event_id + 1,
        actor_user=actor.user if actor.user is not None and actor.user.pk else None,
        actor=actor.label,
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        before=before,
        after=after,
        prev_hash=head.last_hash,
    )
    event.hash = event.compute_hash()
    event.save(force_insert=True)
    AuditChainHead.objects.filter(pk=head.pk).update(last_event_id=event.pk, last_hash=event.hash, count=head.count + 1)
    return event


@dataclass(frozen=True)
class AuditVerification:
    checked: int
    broken_at: int | None = None  # the id of the first broken link
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def audit_verify() -> AuditVerification:
    """Recompute the chain from the first event; report the first broken link."""
    expected_id = 1
    prev_hash = GENESIS_HASH
    checked = 0
    for event in AuditEvent.objects.order_by("pk").iterator(chunk_size=2000):
        if event.pk != expected_id:
            return AuditVerification(
                checked, expected_id, f"event #{expected_id} is missing (deleted); the next event is #{event.pk}"
            )
        if event.prev_hash != prev_hash:
            return AuditVerification(
                checked, event.pk, f"event #{event.pk} does not link to the hash of event #{event.pk - 1}"
            )
        if event.compute_hash() != event.hash:
            return AuditVerification(
                checked, event.pk, f"event #{event.pk} was edited: its contents no longer match its hash"
            )
        prev_hash = event.hash
        expected_id += 1
        checked += 1
    head = AuditChainHead.objects.filter(singleton=True).first()
    last_id = expected_id - 1
    if head is not None and (head.last_event_id != last_id or head.last_hash != prev_hash):
        return AuditVerification(
            checked,
            last_id + 1,
            f"the chain ends at event #{last_id} but its head records #{head.last_event_id}: "
            "the newest event(s) were deleted or the head was edited",
        )
    return AuditVerification(checked)
