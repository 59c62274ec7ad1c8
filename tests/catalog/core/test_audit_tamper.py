"""The tampers the adversarial review of issue 19 got past `verify_audit_log`, each now caught and named: the head row
deleted, everything deleted, the newest events truncated and the head rewritten (or put back to an earlier state),
a forged unsealed event, the chain recomputed after an edit. Each tamper is raw SQL as the tables' owner would run it
(tests/catalog/core/tampering.py)."""

from __future__ import annotations

import json
import logging
import secrets
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from django.test import Client, override_settings
from django.utils import timezone

from catalog.core.audit import Actor, audit_record, audit_seal, audit_verify, audit_verify_checkpoints
from catalog.models import AuditChainHead, AuditEvent
from catalog.models.audit import event_mac, event_seal, head_mac
from tests.catalog.core.tampering import EVENTS, HEAD, as_table_owner, head_row
from tests.conftest import tasks_in_process

pytestmark = pytest.mark.django_db


@pytest.fixture
def checkpoints(settings: Any, tmp_path: Path) -> Path:
    path = tmp_path / "audit-checkpoints.jsonl"
    settings.CONDOR_AUDIT_CHECKPOINT_FILE = str(path)
    return path


def record(n: int, *, start: int = 0) -> list[AuditEvent]:
    """n events in one transaction, then one seal (one checkpoint), as the beat would."""
    with transaction.atomic():
        events = [
            audit_record(actor=Actor("cli"), action="test.action", object_type="thing", object_id=i, after={"i": i})
            for i in range(start, start + n)
        ]
    audit_seal()
    return list(AuditEvent.objects.filter(pk__in=[e.pk for e in events]).order_by("pk"))


def against(path: Path) -> Any:
    return audit_verify_checkpoints(path.read_text().splitlines())


def insert_raw(cursor: Any, *, mac: str | None, nonce: str = "", actor: str = "user:approver") -> int:
    """An event INSERTed straight into the table, as someone without the key would write it."""
    cursor.execute(
        f"INSERT INTO {EVENTS} (created_at, actor, action, object_type, object_id, before, after, nonce, mac, "
        "prev_hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        [
            timezone.now(),
            actor,
            "approvals.request.approved",
            "approvals.request",
            "42",
            None,
            '{"x": 1}',
            nonce,
            mac,
            "",
        ],
    )
    return int(AuditEvent.objects.order_by("-pk").values_list("pk", flat=True)[0])


def test_a_deleted_head_is_broken_and_sealing_stops_instead_of_starting_again_at_1() -> None:
    record(3)
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {HEAD}")
    result = audit_verify()
    assert (result.ok, result.place) == (False, "the chain head")
    assert result.reason == "the chain head row is missing while 3 sealed event(s) exist: it was deleted"
    # A later event is kept, unsealed: sealing on would restart the chain at #1 over the existing one.
    (later,) = record(1, start=9)
    assert later.seq is None and not AuditChainHead.objects.exists()
    with pytest.raises(CommandError, match=r"audit log BROKEN at the chain head: the chain head row is missing"):
        call_command("verify_audit_log")


@pytest.mark.django_db(transaction=True)
def test_audited_writes_still_answer_when_the_head_is_gone(caplog: pytest.LogCaptureFixture) -> None:
    """Before issue 19 every seal after the head's deletion failed on a duplicate position, and the on-commit seal
    turned each audited write into a 500 although it had committed."""
    admin = get_user_model().objects.create_superuser("root", "root@example.org", "a long admin password")
    editor = get_user_model().objects.create_user("editor", password="a long editor password")
    with tasks_in_process():
        record(2)
        with as_table_owner() as cursor:
            cursor.execute(f"DELETE FROM {HEAD}")
        client = Client()
        client.force_login(admin)
        group = Group.objects.create(name="catalog-admin-test")
        with caplog.at_level(logging.ERROR, logger="condor.audit"):
            response = client.post(
                f"/admin/auth/user/{editor.pk}/change/",
                {
                    "username": "editor",
                    "is_active": "on",
                    "groups": [group.pk],
                    "date_joined_0": "2026-01-01",
                    "date_joined_1": "10:00:00",
                    "initial-date_joined_0": "2026-01-01",
                    "initial-date_joined_1": "10:00:00",
                },
            )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert list(editor.groups.values_list("name", flat=True)) == ["catalog-admin-test"]
    unsealed = AuditEvent.objects.filter(seq__isnull=True)
    assert {"auth.user.groups.added", "admin.changed"} <= set(unsealed.values_list("action", flat=True))
    assert "audit chain head is missing while sealed events exist: sealing stopped" in caplog.text
    assert not audit_verify().ok


def test_deleting_everything_is_caught_by_the_checkpoints(checkpoints: Path) -> None:
    record(2)
    record(2, start=2)
    assert [json.loads(line)["seq"] for line in checkpoints.read_text().splitlines()] == [2, 4]
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS}")
        cursor.execute(f"DELETE FROM {HEAD}")
    # Inside the database nothing is left to disagree with: an empty log.
    assert audit_verify().ok and audit_verify().checked == 0
    result = against(checkpoints)
    assert (result.ok, result.place, result.broken_at) == (False, "checkpoint line 1", 2)
    assert "records event #2" in result.reason and "past the chain's end at #0" in result.reason
    assert "truncated" in result.reason
    # Writes go on and the chain starts again at #1: the old checkpoints now disagree with its hashes.
    record(2, start=10)
    rewritten = against(checkpoints)
    assert (
        rewritten.place == "checkpoint line 1" and "the chain was rewritten at or before event #2" in rewritten.reason
    )


def test_truncating_the_newest_and_rewriting_the_head_needs_the_key() -> None:
    events = record(2) + record(2, start=2)
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE seq > 2")
        cursor.execute(f"UPDATE {HEAD} SET last_seq = 2, count = 2, last_hash = %s", [events[1].hash])
    result = audit_verify()
    assert (result.ok, result.place) == (False, "the chain head")
    assert "the chain head (#2) was rewritten: its MAC does not match" in result.reason
    # The sealer does not re-sign a rewritten head (that would erase the evidence): new events stay unsealed.
    (later,) = record(1, start=9)
    assert later.seq is None


def test_truncating_the_newest_and_putting_back_an_earlier_head_is_caught_by_the_checkpoints(
    checkpoints: Path,
) -> None:
    """The one truncation the database cannot tell: the head row as it was when the chain was shorter, kept by
    someone who could read the table then. The checkpoints outside the database can."""
    record(2)
    earlier = head_row()
    record(2, start=2)
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE seq > 2")
        cursor.execute(
            f"UPDATE {HEAD} SET last_seq = %s, last_hash = %s, count = %s, mac = %s",
            [earlier["last_seq"], earlier["last_hash"], earlier["count"], earlier["mac"]],
        )
    assert audit_verify().ok  # a consistent, shorter chain
    result = against(checkpoints)
    assert (result.ok, result.place, result.broken_at) == (False, "checkpoint line 2", 4)
    assert "past the chain's end at #2: the newest events were deleted (the log was truncated)" in result.reason


def test_a_forged_unsealed_event_is_never_sealed_and_is_named() -> None:
    record(2)
    with as_table_owner() as cursor:
        no_mac = insert_raw(cursor, mac=None)
        guessed = insert_raw(cursor, mac=secrets.token_hex(32), nonce=secrets.token_hex(16))
    (genuine,) = record(1, start=5)
    # The genuine event after them is sealed in its place; the forged ones get no position.
    assert genuine.seq == 3
    assert list(AuditEvent.objects.filter(seq__isnull=True).values_list("pk", flat=True)) == [no_mac, guessed]
    result = audit_verify()
    assert (result.ok, result.place) == (False, f"unsealed event id {no_mac}")
    assert result.reason.startswith(f"forged unsealed event id {no_mac}: it has no valid MAC")
    assert "1 more forged event(s) after it" in result.reason
    with pytest.raises(CommandError, match=rf"audit log BROKEN at unsealed event id {no_mac}: forged unsealed event"):
        call_command("verify_audit_log")


def test_an_event_edited_before_it_was_sealed_is_not_sealed() -> None:
    """Before the MAC, an event edited in SQL in the seconds before its seal was sealed as edited."""
    with transaction.atomic():
        event = audit_record(
            actor=Actor("user:approver"), action="approvals.request.approved", object_type="x", object_id=1
        )
    with as_table_owner() as cursor:
        cursor.execute(f"UPDATE {EVENTS} SET actor = 'user:someone-else' WHERE id = %s", [event.pk])
    result = audit_verify()
    assert AuditEvent.objects.get(pk=event.pk).seq is None
    assert result.place == f"unsealed event id {event.pk}" and "no valid MAC" in result.reason


def test_a_forged_event_with_a_mac_under_another_key_is_not_sealed() -> None:
    record(1)
    with override_settings(CONDOR_AUDIT_KEY="an attacker's guess at the key, long enough"):
        forged = AuditEvent(actor="user:approver", action="x", object_type="y", object_id="1", nonce="ab" * 16)
        forged.created_at = timezone.now()
        mac = event_mac(forged)
    with as_table_owner() as cursor:
        cursor.execute(
            f"INSERT INTO {EVENTS} (created_at, actor, action, object_type, object_id, nonce, mac, prev_hash) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, '')",
            [forged.created_at, forged.actor, forged.action, forged.object_type, forged.object_id, forged.nonce, mac],
        )
    assert audit_seal() == 0
    assert "forged unsealed event id" in audit_verify().reason


def test_a_copy_of_a_genuine_event_is_refused_by_the_database() -> None:
    """Replaying a real event (an approval, say) as a new row: its MAC is unique, so the copy cannot be stored."""
    (original,) = record(1)
    columns = "created_at, actor, action, object_type, object_id, before, after, nonce, mac, prev_hash"
    with as_table_owner() as cursor, pytest.raises(IntegrityError), transaction.atomic():
        cursor.execute(f"INSERT INTO {EVENTS} ({columns}) SELECT {columns} FROM {EVENTS} WHERE id = %s", [original.pk])


def rewrite_from(seq: int, *, actor: str) -> None:
    """Edit event #seq's actor and recompute every MAC and hash from it on, and the head, with whatever key the
    settings hold at the call."""
    events = list(AuditEvent.objects.filter(seq__gte=seq).order_by("seq"))
    prev = AuditEvent.objects.get(seq=seq - 1).hash if seq > 1 else "0" * 64
    events[0].actor = actor
    with as_table_owner() as cursor:
        for event in events:
            event.prev_hash = prev
            event.mac = event_mac(event)
            event.hash = prev = event_seal(event)
            cursor.execute(
                f"UPDATE {EVENTS} SET actor = %s, mac = %s, prev_hash = %s, hash = %s WHERE id = %s",
                [event.actor, event.mac, event.prev_hash, event.hash, event.pk],
            )
        head = AuditChainHead.objects.get()
        head.last_hash = prev
        cursor.execute(f"UPDATE {HEAD} SET last_hash = %s, mac = %s", [prev, head_mac(head)])


def test_recomputing_the_chain_after_an_edit_needs_the_key() -> None:
    record(4)
    with override_settings(CONDOR_AUDIT_KEY="not the key: whoever lacks it can only guess"):
        rewrite_from(2, actor="user:someone-else")
    result = audit_verify()
    assert (result.ok, result.place) == (False, "the chain head")  # the head's MAC is checked first
    assert "rewritten" in result.reason


def test_recomputing_the_chain_without_the_key_breaks_at_the_edit() -> None:
    record(4)
    head = head_row()
    with override_settings(CONDOR_AUDIT_KEY="not the key: whoever lacks it can only guess"):
        rewrite_from(2, actor="user:someone-else")
    with as_table_owner() as cursor:  # even with the head's old MAC put back, the chain breaks where it was edited
        cursor.execute(f"UPDATE {HEAD} SET last_hash = %s, mac = %s", [head["last_hash"], head["mac"]])
    result = audit_verify()
    assert (result.ok, result.broken_at) == (False, 2)
    assert "event #2 was edited: its contents no longer match its MAC" in result.reason


def test_with_the_key_stolen_a_recomputed_chain_is_still_caught_by_the_checkpoints(checkpoints: Path) -> None:
    """What the key cannot protect against, the checkpoints outside the database still catch."""
    record(2)
    record(2, start=2)
    rewrite_from(2, actor="user:someone-else")  # with the real key
    assert audit_verify().ok
    result = against(checkpoints)
    assert (result.ok, result.place) == (False, "checkpoint line 1")
    assert "the chain was rewritten at or before event #2" in result.reason


def test_every_seal_writes_its_checkpoint_to_the_log_and_the_file(
    checkpoints: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="condor.audit"):
        record(3)
        record(1, start=3)
    head = AuditChainHead.objects.get()
    lines = [json.loads(line) for line in checkpoints.read_text().splitlines()]
    assert [(c["seq"], len(c["hash"])) for c in lines] == [(3, 64), (4, 64)]
    assert lines[-1]["hash"] == head.last_hash and lines[-1]["at"].startswith(str(timezone.now().year))
    logged = [r.getMessage() for r in caplog.records if r.name == "condor.audit"]
    assert logged[-1].startswith(f"audit checkpoint seq=4 hash={head.last_hash} at=")
    # The log lines themselves are checkpoints too (an export from the log store).
    assert audit_verify_checkpoints(logged).ok and audit_verify_checkpoints(logged).checked == 2


def test_an_unwritable_checkpoint_file_is_logged_and_the_seal_stands(
    settings: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CONDOR_AUDIT_CHECKPOINT_FILE = str(tmp_path / "no-such-directory" / "checkpoints.jsonl")
    with caplog.at_level(logging.ERROR, logger="condor.audit"):
        (event,) = record(1)
    assert event.seq == 1 and audit_verify().ok
    assert "could not append audit checkpoint seq=1" in caplog.text
