"""Tampering with the audit tables as someone with the database's rights would: raw SQL, and on PostgreSQL with
the audit triggers (migration 0014) switched off first, which takes the tables' owner (an attacker with DDL rights,
or a DBA). The application's own connection cannot do any of it while the triggers are on
(tests/catalog/core/test_audit_guards.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection

from catalog.models import AuditChainHead, AuditEvent

EVENTS = AuditEvent._meta.db_table
HEAD = AuditChainHead._meta.db_table


@contextmanager
def as_table_owner() -> Iterator[Any]:
    """A cursor that may UPDATE, DELETE and INSERT audit rows at will."""
    postgres = connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        if postgres:
            # ALTER TABLE waits for no deferred check: run the pending foreign-key checks of this test's rows now.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for table in (EVENTS, HEAD):
                cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        try:
            yield cursor
        finally:
            if postgres:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                for table in (EVENTS, HEAD):
                    cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def head_row() -> dict[str, Any]:
    """The head row's columns, as an attacker reading the table would keep them."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, singleton, last_seq, last_hash, count, mac FROM {HEAD}")
        row = cursor.fetchone()
    return dict(zip(("id", "singleton", "last_seq", "last_hash", "count", "mac"), row, strict=True))
