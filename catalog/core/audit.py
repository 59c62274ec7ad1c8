"""Writing and verifying the hash-chained audit log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from celery import current_app
from django.contrib.auth.models import User
from django.db import models, transaction

from catalog.models import AuditChainHead, AuditEvent
from catalog.models.audit import GENESIS_HASH


@dataclass(frozen=True)
class Actor:
    """Who did it: a person (user), a service (token) or the system, as one readable label."""

    label: str
    user: User | None = None

    @classmethod
    def for_user(cls, user: User) -> Actor:
        return cls(label=f"user:{user.get_username()}", user=user)

    @classmethod
    def for_token(cls, token_name: str) -> Actor:
        return cls(label=f"token:{token_name}")


def audit_record(
    *, actor: Actor, action: str, object_type: str, object_id: str | int | UUID, before: Any = None, after: Any = None
) -> AuditEvent:
    """Append one event: one INSERT, no lock. Must run inside the transaction of the change it records; the
    event is sealed into the hash chain after that transaction commits (see catalog.models.audit)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit_record must run inside the transaction of the change it records")
    event = AuditEvent(
        actor_user=actor.user if actor.user is not None and actor.user.pk else None,
        actor=actor.label,
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        before=before,
        after=after,
    )
    event.save(force_insert=True)  # through AuditEvent.save(), the append-only guard
    transaction.on_commit(_seal_soon)
    return event


def _seal_soon() -> None:
    # With a broker the beat seals in batches every few seconds (no extra work on the request path);
    # with none (the demo, unit tests) there is no beat, so seal right after commit.
    if current_app.conf.task_always_eager:
        audit_seal()


def audit_seal(*, batch: int = 5000) -> int:
    """Seal committed, unsealed events into the chain in id order; returns how many. Safe to run anywhere,
    any number of times at once: the head row's lock serialises sealers."""
    sealed = 0
    while True:
        with transaction.atomic():
            AuditChainHead.objects.get_or_create(singleton=True)
            head = AuditChainHead.objects.select_for_update().get(singleton=True)
            pending = list(AuditEvent.objects.filter(seq__isnull=True).order_by("pk")[:batch])
            if not pending:
                return sealed
            seq, prev = head.last_seq, head.last_hash
            for event in pending:
                seq += 1
                event.seq, event.prev_hash = seq, prev
                event.hash = prev = event.compute_hash()
            # The one sanctioned write to events: a plain QuerySet, not the append-only manager.
            events: models.QuerySet[AuditEvent] = models.QuerySet(model=AuditEvent)
            events.bulk_update(pending, ["seq", "prev_hash", "hash"], batch_size=1000)
            AuditChainHead.objects.filter(pk=head.pk).update(
                last_seq=seq, last_hash=prev, count=head.count + len(pending)
            )
            sealed += len(pending)
        if len(pending) < batch:
            return sealed


@dataclass(frozen=True)
class AuditVerification:
    checked: int
    broken_at: int | None = None  # the id of the first broken link
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def audit_verify(*, seal: bool = True) -> AuditVerification:
    """Seal what is pending (unless told not to), then recompute the chain from its first position and report
    the first broken link: an edited event, a re-hashed edit (the next link breaks), a deleted event (a gap),
    or deleted newest events (the head records more)."""
    if seal:
        audit_seal()
    # The head first: events sealed after this read (by a sealer running meanwhile) lie beyond it and are left
    # for the next verification, instead of looking like a chain that outgrew its head.
    head = AuditChainHead.objects.filter(singleton=True).first()
    last_sealed = head.last_seq if head is not None else None
    expected = 1
    prev_hash = GENESIS_HASH
    checked = 0
    sealed = AuditEvent.objects.filter(seq__isnull=False).order_by("seq")
    if last_sealed is not None:
        sealed = sealed.filter(seq__lte=last_sealed)
    for event in sealed.iterator(chunk_size=2000):
        if event.seq != expected:
            return AuditVerification(
                checked, expected, f"event #{expected} is missing (deleted); the next event is #{event.seq}"
            )
        if event.prev_hash != prev_hash:
            return AuditVerification(
                checked, event.seq, f"event #{event.seq} does not link to the hash of event #{event.seq - 1}"
            )
        if event.compute_hash() != event.hash:
            return AuditVerification(
                checked, event.seq, f"event #{event.seq} was edited: its contents no longer match its hash"
            )
        prev_hash = event.hash
        expected += 1
        checked += 1
    last = expected - 1
    if head is not None and (head.last_seq != last or head.last_hash != prev_hash):
        return AuditVerification(
            checked,
            last + 1,
            f"the chain ends at event #{last} but its head records #{head.last_seq}: "
            "the newest event(s) were deleted or the head was edited",
        )
    return AuditVerification(checked)
