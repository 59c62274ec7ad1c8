"""Migration 0014 re-keys an existing chain (sealed with plain SHA-256 before issue 19) after verifying it, refuses a
broken one with its first break named, and refuses to re-key in production without CONDOR_AUDIT_KEY."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from catalog.core.audit import audit_verify
from catalog.models import AuditChainHead, AuditEvent

BEFORE = [("catalog", "0013_token_scopes")]


def legacy_chain_hash(prev_hash: str, payload: dict[str, Any]) -> str:
    """catalog.models.audit.chain_hash as it was before the chain was keyed, verbatim."""
    body = json.dumps(json.loads(json.dumps(payload, cls=DjangoJSONEncoder)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


KEY = "the deployment's audit key, 48 characters long.."


@pytest.fixture
def before_0014(settings: Any) -> Iterator[Any]:
    """The database as the previous release left it (its models), migrated forward again afterwards; the
    deployment has set its CONDOR_AUDIT_KEY, as a production upgrade must."""
    settings.CONDOR_AUDIT_KEY = KEY
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        yield executor.loader.project_state(BEFORE).apps
    finally:
        latest = MigrationExecutor(connection)
        latest.migrate(latest.loader.graph.leaf_nodes())


def migrate_forward() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def legacy_log(apps: Any, n: int, *, unsealed: int = 0) -> list[Any]:
    Event, Head = apps.get_model("catalog", "AuditEvent"), apps.get_model("catalog", "AuditChainHead")
    prev = "0" * 64
    events = []
    for i in range(n + unsealed):
        event = Event.objects.create(
            created_at=datetime(2026, 1, 1, 12, i, tzinfo=UTC),
            actor="cli",
            action="test.action",
            object_type="thing",
            object_id=str(i),
            after={"i": i, "note": "ä"},
        )
        if i < n:
            payload = {
                "id": event.pk,
                "created_at": event.created_at.isoformat(),
                "actor_user": None,
                **{k: getattr(event, k) for k in ("actor", "action", "object_type", "object_id", "before", "after")},
            }
            event.seq, event.prev_hash = i + 1, prev
            event.hash = prev = legacy_chain_hash(prev, payload)
            event.save()
        events.append(event)
    Head.objects.create(singleton=True, last_seq=n, last_hash=prev, count=n)
    return events


@pytest.mark.django_db(transaction=True)
def test_an_intact_chain_is_rekeyed_and_verifies(before_0014: Any) -> None:
    legacy_log(before_0014, 3, unsealed=1)
    migrate_forward()
    head = AuditChainHead.objects.get()
    assert head.last_seq == 3 and len(head.mac) == 64
    assert all(e.mac_is_valid() for e in AuditEvent.objects.all())
    result = audit_verify()  # seals the one appended before the migration, then checks all four
    assert result.ok and result.checked == 4, result.reason


@pytest.mark.django_db(transaction=True)
def test_a_broken_chain_is_not_rekeyed(before_0014: Any) -> None:
    events = legacy_log(before_0014, 3)
    events[1].actor = "someone-else"
    events[1].save()
    with pytest.raises(RuntimeError, match=r"the audit chain is broken at event #2 \(it was edited"):
        migrate_forward()
    # The migration rolled back: nothing was re-keyed, the chain stays as the previous release sealed it.
    Event = before_0014.get_model("catalog", "AuditEvent")
    assert [f.name for f in Event._meta.get_fields() if f.name == "mac"] == []
    assert Event.objects.get(seq=3).prev_hash == events[1].hash
    # The previous release's tables have no triggers: clear them so the fixture can migrate forward.
    Event.objects.all().delete()
    before_0014.get_model("catalog", "AuditChainHead").objects.all().delete()


@pytest.mark.django_db(transaction=True)
def test_production_must_set_the_key_before_rekeying(before_0014: Any, settings: Any) -> None:
    legacy_log(before_0014, 1)
    settings.DEBUG, settings.CONDOR_AUDIT_KEY = False, ""
    with pytest.raises(RuntimeError, match="set CONDOR_AUDIT_KEY before this migration"):
        migrate_forward()
    settings.CONDOR_AUDIT_KEY = KEY
    migrate_forward()
    assert audit_verify().ok
