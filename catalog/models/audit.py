"""The append-only, hash-chained audit log.

Every state change people or services make writes one event in the same transaction as the change. Events
are *sealed* into the chain shortly after they commit (by the beat task `seal_audit_log` every couple of
seconds, right after commit when there is no broker, and before every verification): sealing gives each
event the next chain position (`seq`, contiguous: a gap is a deletion), the hash of the event before it and
its own hash. Appending is therefore one INSERT with no lock on the request path; the one global lock is
taken by the sealer, once per batch. `manage.py verify_audit_log` recomputes the chain and names the first
broken link. The ORM refuses to update or delete events (sealing writes through a plain QuerySet).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone

GENESIS_HASH = "0" * 64


class AuditLogIsAppendOnly(Exception):
    pass


class AuditEventQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise AuditLogIsAppendOnly("audit events cannot be updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AuditLogIsAppendOnly("audit events cannot be deleted")


class AuditEvent(models.Model):
    created_at = models.DateTimeField(default=timezone.now)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor = models.CharField(max_length=200, help_text="user:NAME, token:NAME, cli, system …")
    action = models.CharField(max_length=100, db_index=True)
    object_type = models.CharField(max_length=100)
    object_id = models.CharField(max_length=200)
    before = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    # Set when the event is sealed into the chain (NULL / "" until then).
    seq = models.BigIntegerField(null=True, blank=True, unique=True, help_text="position in the hash chain")
    prev_hash = models.CharField(max_length=64, blank=True, default="")
    hash = models.CharField(max_length=64, null=True, blank=True, unique=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_object_idx")]

    def __str__(self) -> str:
        return f"#{self.seq or '-'} {self.action} {self.object_type}:{self.object_id} by {self.actor}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AuditLogIsAppendOnly("audit events cannot be updated")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AuditLogIsAppendOnly("audit events cannot be deleted")

    def compute_hash(self) -> str:
        return chain_hash(
            self.prev_hash,
            {
                "id": self.pk,
                "created_at": self.created_at.isoformat(),
                "actor_user": self.actor_user_id,
                "actor": self.actor,
                "action": self.action,
                "object_type": self.object_type,
                "object_id": self.object_id,
                "before": self.before,
                "after": self.after,
            },
        )


def chain_hash(prev_hash: str, payload: dict[str, Any]) -> str:
    # JSON round-trip first, so the hash covers exactly what the JSON column will hold and read back.
    body = json.dumps(json.loads(json.dumps(payload, cls=DjangoJSONEncoder)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


class AuditChainHead(models.Model):
    """One row: the last sealed event's position and hash. Sealing locks it, so the chain never forks, and
    a deleted newest event is still detected."""

    singleton = models.BooleanField(default=True, unique=True)
    last_seq = models.BigIntegerField(default=0)
    last_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(singleton=True), name="audit_head_singleton")]

    def __str__(self) -> str:
        return f"audit head #{self.last_seq}"
