"""The audit log: appended in the transaction of the change, hash-chained, append-only, verifiable."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction

from catalog.models import AuditChainHead, AuditEvent, AuditLogIsAppendOnly
from catalog.services.audit import Actor, audit_record, audit_verify
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db


def record(n: int) -> list[AuditEvent]:
    with transaction.atomic():
        return [
            audit_record(actor=Actor("cli"), action="test.action", object_type="thing", object_id=i, after={"i": i})
            for i in range(n)
        ]


def verify_output() -> str:
    out = io.StringIO()
    call_command("verify_audit_log", stdout=out)
    return out.getvalue()


def test_events_chain_each_to_the_one_before() -> None:
    events = record(3)
    assert [e.pk for e in events] == [1, 2, 3]
    assert events[0].prev_hash == "0" * 64
    assert events[1].prev_hash == events[0].hash and events[2].prev_hash == events[1].hash
    head = AuditChainHead.objects.get()
    assert (head.last_event_id, head.last_hash, head.count) == (3, events[2].hash, 3)
    assert verify_output() == "audit log intact: 3 event(s), chain verified\n"


def test_an_import_writes_its_event_in_the_same_transaction(manifests: Any) -> None:
    catalog_import(raw=manifests.encode(manifests.condor()), via="cli condor.json")
    (event,) = AuditEvent.objects.all()
    assert event.action == "catalog.revision.imported" and event.actor == "cli condor.json"
    assert event.object_id == "condor r1" and sorted(event.after["added"]) == [
        "listActiveMedications",
        "prescribeMedication",
    ]
    # A refused import writes no event, and an unchanged one neither.
    catalog_import(raw=manifests.encode(manifests.condor()), via="cli condor.json")
    assert AuditEvent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_recording_outside_a_transaction_is_refused() -> None:
    with pytest.raises(RuntimeError, match="inside the transaction"):
        audit_record(actor=Actor("cli"), action="x", object_type="y", object_id=1)


def test_the_orm_refuses_update_and_delete() -> None:
    (event,) = record(1)
    event.action = "edited"
    with pytest.raises(AuditLogIsAppendOnly):
        event.save()
    with pytest.raises(AuditLogIsAppendOnly):
        event.delete()
    with pytest.raises(AuditLogIsAppendOnly):
        AuditEvent.objects.filter(pk=event.pk).update(action="edited")
    with pytest.raises(AuditLogIsAppendOnly):
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.get().action == "test.action"


def test_a_row_edited_in_sql_is_named() -> None:
    record(5)
    table = AuditEvent._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET after = %s WHERE id = 3", ['{"i": 999}'])
    result = audit_verify()
    assert (result.ok, result.broken_at, result.checked) == (False, 3, 2)
    assert "event #3 was edited" in result.reason
    with pytest.raises(CommandError, match=r"audit log BROKEN at event #3: event #3 was edited"):
        call_command("verify_audit_log")


def test_a_rehashed_edit_breaks_the_next_link() -> None:
    """An attacker who also recomputes the edited row's hash still breaks the link of the row after it."""
    events = record(4)
    forged = AuditEvent.objects.get(pk=2)
    forged.actor = "someone-else"
    new_hash = forged.compute_hash()
    table = AuditEvent._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET actor = %s, hash = %s WHERE id = 2", ["someone-else", new_hash])
    result = audit_verify()
    assert result.broken_at == 3 and "does not link" in result.reason
    assert events[2].prev_hash != new_hash


def test_a_row_deleted_in_sql_is_named() -> None:
    record(4)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {AuditEvent._meta.db_table} WHERE id = 2")
    result = audit_verify()
    assert result.broken_at == 2 and "event #2 is missing" in result.reason


def test_the_newest_row_deleted_in_sql_is_named() -> None:
    record(3)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {AuditEvent._meta.db_table} WHERE id = 3")
    result = audit_verify()
    assert result.broken_at == 3 and "head records #3" in result.reason


def test_an_empty_log_verifies() -> None:
    assert audit_verify().ok and audit_verify().checked == 0
