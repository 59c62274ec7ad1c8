"""The audit log: appended in the transaction of the change, hash-chained, append-only, verifiable.

Tampering goes through raw SQL as the tables' owner would run it (tests/catalog/core/tampering.py); the tampers the
key and the checkpoints catch are in test_audit_tamper.py."""

from __future__ import annotations

import hashlib
import io
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from catalog.core.audit import Actor, audit_record, audit_seal, audit_verify
from catalog.models import AuditChainHead, AuditEvent, AuditLogIsAppendOnly
from catalog.services.imports import catalog_import
from tests.catalog.core.tampering import EVENTS, as_table_owner
from tests.conftest import requires_postgres

pytestmark = pytest.mark.django_db


def record(n: int, *, seal: bool = True) -> list[AuditEvent]:
    with transaction.atomic():
        events = [
            audit_record(actor=Actor("cli"), action="test.action", object_type="thing", object_id=i, after={"i": i})
            for i in range(n)
        ]
    if seal:  # what the beat (or, with no broker, the commit) does within seconds
        audit_seal()
    return list(AuditEvent.objects.filter(pk__in=[e.pk for e in events]).order_by("seq"))


def verify_output() -> str:
    out = io.StringIO()
    call_command("verify_audit_log", stdout=out)
    return out.getvalue()


def test_events_chain_each_to_the_one_before() -> None:
    events = record(3)
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[0].prev_hash == "0" * 64
    assert events[1].prev_hash == events[0].hash and events[2].prev_hash == events[1].hash
    head = AuditChainHead.objects.get()
    assert (head.last_seq, head.last_hash, head.count) == (3, events[2].hash, 3)
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
    with as_table_owner() as cursor:
        cursor.execute(f"UPDATE {EVENTS} SET after = %s WHERE seq = 3", ['{"i": 999}'])
    result = audit_verify()
    assert (result.ok, result.broken_at, result.checked) == (False, 3, 2)
    assert "event #3 was edited" in result.reason
    with pytest.raises(CommandError, match=r"audit log BROKEN at event #3: event #3 was edited"):
        call_command("verify_audit_log")


def test_a_rehashed_edit_is_named_and_breaks_the_next_link() -> None:
    """An attacker who also recomputes the edited row's hash, without the key (plain SHA-256 is all they have), is
    caught at that row; the row after it no longer links either. (Before the chain was keyed, a recomputed hash
    passed its own row and only the next link broke: issue 19.)"""
    events = record(4)
    forged = AuditEvent.objects.get(seq=2)
    body = json.dumps({"prev": forged.prev_hash, "actor": "someone-else", "id": forged.pk}, sort_keys=True)
    new_hash = hashlib.sha256(body.encode()).hexdigest()
    with as_table_owner() as cursor:
        cursor.execute(f"UPDATE {EVENTS} SET actor = %s, hash = %s WHERE seq = 2", ["someone-else", new_hash])
    result = audit_verify()
    assert (result.broken_at, result.place) == (2, "event #2") and "event #2 was edited" in result.reason
    assert events[2].prev_hash != new_hash


def test_a_row_deleted_in_sql_is_named() -> None:
    record(4)
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE seq = 2")
    result = audit_verify()
    assert result.broken_at == 2 and "event #2 is missing" in result.reason


def test_the_newest_row_deleted_in_sql_is_named() -> None:
    record(3)
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE seq = 3")
    result = audit_verify()
    assert result.broken_at == 3 and "head records #3" in result.reason


def test_an_empty_log_verifies() -> None:
    assert audit_verify().ok and audit_verify().checked == 0


def test_appending_is_one_insert_and_takes_no_lock() -> None:
    with transaction.atomic():
        with CaptureQueriesContext(connection) as queries:
            event = audit_record(actor=Actor("cli"), action="x", object_type="y", object_id=1)
    statements = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    assert len(statements) == 1 and statements[0].startswith("INSERT")
    assert event.seq is None and event.hash is None  # not sealed yet
    assert audit_seal() == 1 and audit_seal() == 0
    assert AuditEvent.objects.get(pk=event.pk).seq == 1


@pytest.fixture
def broker(request: Any) -> Iterator[None]:
    """Run as if there were (True) or were not (False) a broker: with one, only the beat seals."""
    from condor_admin.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = not request.param
    yield
    app.conf.task_always_eager = saved


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("broker", [False], indirect=True)
def test_with_no_broker_events_are_sealed_right_after_commit(broker: None) -> None:
    with transaction.atomic():
        audit_record(actor=Actor("cli"), action="x", object_type="y", object_id=1)
    assert AuditEvent.objects.get().seq == 1
    assert audit_verify(seal=False).ok


def test_sealing_follows_commit_order_not_id_order() -> None:
    first, second = record(2, seal=False)[0], None
    audit_seal()
    second = record(1)[0]
    assert (AuditEvent.objects.get(pk=first.pk).seq, second.seq) == (1, 3)
    assert audit_verify().ok


@requires_postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("broker", [True], indirect=True)
def test_concurrent_appends_and_sealers_build_one_unbroken_chain(broker: None) -> None:
    """8 writers append 25 events each in their own transactions while 3 sealers run: one chain, no gap; and a
    verification running meanwhile never mistakes a seal in progress for a broken chain."""
    barrier = threading.Barrier(12)
    verdicts: list[str] = []
    done = threading.Event()

    def writer(n: int) -> None:
        barrier.wait()
        try:
            for i in range(25):
                with transaction.atomic():
                    audit_record(actor=Actor(f"w{n}"), action="race", object_type="thing", object_id=i)
        finally:
            connection.close()

    def sealer() -> None:
        barrier.wait()
        try:
            while not done.is_set():
                audit_seal()
        finally:
            connection.close()

    def verifier() -> None:
        barrier.wait()
        try:
            while not done.is_set():
                result = audit_verify(seal=False)
                verdicts.append("ok" if result.ok else result.reason)
        finally:
            connection.close()

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    others = [threading.Thread(target=sealer) for _ in range(3)] + [threading.Thread(target=verifier)]
    for t in writers + others:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in others:
        t.join()
    assert verdicts and set(verdicts) == {"ok"}, [v for v in verdicts if v != "ok"][:3]
    result = audit_verify()
    assert result.ok, result.reason
    assert result.checked == 200
    assert sorted(AuditEvent.objects.values_list("seq", flat=True)) == list(range(1, 201))


def test_every_audited_write_goes_through_the_append_only_save() -> None:
    """audit_record saves through AuditEvent.save() (the append-only guard), so save signals see every event."""
    from django.db.models.signals import pre_save

    seen: list[tuple[bool, str]] = []

    def receiver(sender: Any, instance: AuditEvent, **kwargs: Any) -> None:
        seen.append((instance._state.adding, instance.action))

    pre_save.connect(receiver, sender=AuditEvent)
    try:
        record(2, seal=False)
    finally:
        pre_save.disconnect(receiver, sender=AuditEvent)
    assert seen == [(True, "test.action"), (True, "test.action")]
