"""On PostgreSQL the application cannot UPDATE, DELETE or TRUNCATE audit rows (migration 0014's triggers): raw SQL
through Django's own connection is refused, sealing is the one change let through, and the head only moves forward.
Django's flush (a TRUNCATE of every table) is refused too, except in a session that set
`condor.allow_audit_truncate`, which only the test suite's connections do (tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from catalog.core.audit import Actor, audit_record, audit_seal, audit_verify
from catalog.models import AuditChainHead, AuditEvent
from tests.catalog.core.tampering import EVENTS, HEAD
from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.django_db]


def record(n: int, *, seal: bool = True) -> None:
    with transaction.atomic():
        for i in range(n):
            audit_record(actor=Actor("cli"), action="test.action", object_type="thing", object_id=i, after={"i": i})
    if seal:
        audit_seal()


def refused(sql: str, params: Any = None) -> str:
    """Run `sql` as the application would (its own connection, its own rights); return the refusal."""
    with pytest.raises(DatabaseError) as refusal, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
    return str(refusal.value)


def test_the_migration_installed_the_triggers() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgrelid::regclass::text, tgname FROM pg_trigger "
            "WHERE NOT tgisinternal AND tgname LIKE 'condor_audit%%' ORDER BY 1, 2"
        )
        triggers = cursor.fetchall()
    assert triggers == [
        (HEAD, "condor_audit_head_guard"),
        (HEAD, "condor_audit_head_truncate"),
        (EVENTS, "condor_audit_event_guard"),
        (EVENTS, "condor_audit_event_truncate"),
    ]


def test_a_sealed_event_cannot_be_edited_resealed_or_deleted() -> None:
    record(3)
    assert "catalog_auditevent is append-only: UPDATE of event id" in refused(
        f"UPDATE {EVENTS} SET after = %s WHERE seq = 2", ['{"i": 999}']
    )
    assert "append-only: UPDATE" in refused(f"UPDATE {EVENTS} SET hash = md5(hash) || md5(hash) WHERE seq = 2")
    assert "append-only: UPDATE" in refused(f"UPDATE {EVENTS} SET seq = NULL, hash = NULL WHERE seq = 3")
    assert "append-only: DELETE" in refused(f"DELETE FROM {EVENTS} WHERE seq = 3")
    assert "append-only: DELETE" in refused(f"DELETE FROM {EVENTS}")
    result = audit_verify()
    assert result.ok and result.checked == 3


def test_an_unsealed_event_can_be_sealed_but_not_edited() -> None:
    record(1, seal=False)
    assert "append-only: UPDATE" in refused(f"UPDATE {EVENTS} SET actor = 'user:someone-else'")
    # Setting a position along with any other column is no seal either.
    assert "append-only: UPDATE" in refused(f"UPDATE {EVENTS} SET seq = 1, hash = repeat('a', 64), actor = 'x'")
    assert audit_seal() == 1  # the sealer's UPDATE (seq, prev_hash, hash of an unsealed row) passes
    assert audit_verify().ok


def test_the_head_only_moves_forward() -> None:
    record(2)
    assert "catalog_auditchainhead only moves forward: UPDATE refused" in refused(
        f"UPDATE {HEAD} SET last_seq = 1, count = 1"
    )
    assert "only moves forward: UPDATE" in refused(f"UPDATE {HEAD} SET mac = repeat('0', 64)")
    assert "only moves forward: DELETE" in refused(f"DELETE FROM {HEAD}")
    record(1)
    assert AuditChainHead.objects.get().last_seq == 3 and audit_verify().ok


def test_truncate_is_refused_unless_the_session_allows_it() -> None:
    record(2)
    for table in (EVENTS, HEAD):
        with pytest.raises(DatabaseError, match=f"{table} is append-only: TRUNCATE refused"):
            with transaction.atomic(), connection.cursor() as cursor:
                # Rolled back with the failed TRUNCATE's savepoint: the test session's own setting stays on.
                cursor.execute("SET condor.allow_audit_truncate = 'off'")
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # this test's rows' deferred checks, first
                cursor.execute(f"TRUNCATE {table}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('condor.allow_audit_truncate', true)")
        assert cursor.fetchone() == ("on",)
    assert AuditEvent.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_djangos_flush_needs_the_test_sessions_setting() -> None:
    """What ends every transactional test: refused on a production connection, allowed on the test suite's."""
    record(2)
    with connection.cursor() as cursor:
        cursor.execute("SET condor.allow_audit_truncate = 'off'")
    try:
        with pytest.raises(CommandError, match="couldn't be flushed") as refusal:
            call_command("flush", interactive=False, verbosity=0)
        assert "is append-only: TRUNCATE refused" in str(refusal.value.__cause__)
        assert AuditEvent.objects.count() == 2
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET condor.allow_audit_truncate = 'on'")
    call_command("flush", interactive=False, verbosity=0)
    assert not AuditEvent.objects.exists() and not AuditChainHead.objects.exists()
