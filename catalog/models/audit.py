"""The append-only, keyed hash chain of audit events.

Every state change people or services make writes one event in the same transaction as the change. Events
are *sealed* into the chain shortly after they commit (by the beat task `seal_audit_log` every couple of
seconds, right after commit when there is no broker, and before every verification): sealing gives each
event the next chain position (`seq`, contiguous: a gap is a deletion), the hash of the event before it and
its own hash. Appending is therefore one INSERT with no lock on the request path; the one global lock is
taken by the sealer, once per batch. `manage.py verify_audit_log` recomputes the chain and names the first
broken link. The ORM refuses to update or delete events (sealing writes through a plain QuerySet); on
PostgreSQL a trigger refuses it to every SQL client too (migration 0014).

Anchored outside its own table: every MAC and hash is an HMAC-SHA256 under `CONDOR_AUDIT_KEY`, which is not in
the database. Whoever can write the tables but lacks the key cannot forge an event (its `mac`, computed when it
is appended, would not match), recompute the chain after an edit, or move the head (its own `mac`). Sealing
also writes each checkpoint (position, hash, time) outside the database (catalog.core.audit), which catches
what the key cannot: deleting or truncating the newest events together with the head.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone
from django.utils.crypto import salted_hmac

GENESIS_HASH = "0" * 64


class AuditLogIsAppendOnly(Exception):
    pass


def audit_key() -> bytes:
    """The chain's key: CONDOR_AUDIT_KEY. Unset (the demo, the tests; `check --deploy` refuses it in production,
    condor.E020) a key derived from SECRET_KEY stands in: also outside the database, but then rotating SECRET_KEY
    makes every older event read as edited."""
    configured = getattr(settings, "CONDOR_AUDIT_KEY", "")
    if configured:
        return str(configured).encode("utf-8")
    return salted_hmac("condor.audit.chain", "fallback key", algorithm="sha256").digest()


def keyed_hash(payload: Any) -> str:
    # JSON round-trip first, so the hash covers exactly what the JSON columns will hold and read back.
    body = json.dumps(json.loads(json.dumps(payload, cls=DjangoJSONEncoder)), sort_keys=True, separators=(",", ":"))
    return hmac.new(audit_key(), body.encode("utf-8"), hashlib.sha256).hexdigest()


# The helpers below read attributes only, so migrations can apply them to their historical models.


def event_content(event: Any) -> dict[str, Any]:
    """What an event says, known before its INSERT (its id and chain position are not)."""
    return {
        "created_at": event.created_at.isoformat(),
        "actor_user": event.actor_user_id,
        "actor": event.actor,
        "action": event.action,
        "object_type": event.object_type,
        "object_id": event.object_id,
        "before": event.before,
        "after": event.after,
        "nonce": event.nonce,
    }


def event_mac(event: Any) -> str:
    """The event's MAC, computed as it is appended: proof that the application (holding the key) wrote it."""
    return keyed_hash(["event", event_content(event)])


def event_seal(event: Any) -> str:
    """The event's chain hash: its position, its id, its MAC and contents, linked to the event before it."""
    return keyed_hash(["chain", event.prev_hash, event.seq, event.pk, event.mac, event_content(event)])


def head_mac(head: Any) -> str:
    return keyed_hash(["head", head.last_seq, head.last_hash, head.count])


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
    # Random per event, so two events saying the same thing at the same instant still get distinct MACs and a
    # copied row collides with its original on the unique `mac`.
    nonce = models.CharField(max_length=32, blank=True, default="")
    mac = models.CharField(
        max_length=64, null=True, blank=True, unique=True, help_text="HMAC of the contents, set when appended"
    )
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
        # Here, where every append passes: an event inserted any other way has no valid MAC and is never sealed.
        if not self.nonce:
            self.nonce = secrets.token_hex(16)
        self.mac = event_mac(self)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AuditLogIsAppendOnly("audit events cannot be deleted")

    def mac_is_valid(self) -> bool:
        return self.mac is not None and hmac.compare_digest(self.mac, event_mac(self))

    def compute_hash(self) -> str:
        return event_seal(self)


class AuditChainHead(models.Model):
    """One row: the last sealed event's position and hash. Sealing locks it, so the chain never forks, and
    a deleted newest event is still detected; its `mac` (keyed) shows whether anyone but the sealer moved it."""

    singleton = models.BooleanField(default=True, unique=True)
    last_seq = models.BigIntegerField(default=0)
    last_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    count = models.BigIntegerField(default=0)
    mac = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(singleton=True), name="audit_head_singleton")]

    def __str__(self) -> str:
        return f"audit head #{self.last_seq}"
