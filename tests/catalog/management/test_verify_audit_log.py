"""`manage.py verify_audit_log [--checkpoints FILE]`: what it says when the log is intact, when the checkpoints
outside the database disagree with it, and when FILE is not a checkpoint file."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from catalog.core.audit import Actor, audit_record, audit_seal
from tests.catalog.core.tampering import EVENTS, HEAD, as_table_owner, head_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def checkpoints(settings: Any, tmp_path: Path) -> Path:
    path = tmp_path / "audit-checkpoints.jsonl"
    settings.CONDOR_AUDIT_CHECKPOINT_FILE = str(path)
    return path


def seal(n: int) -> None:
    with transaction.atomic():
        for i in range(n):
            audit_record(actor=Actor("cli"), action="test.action", object_type="thing", object_id=i)
    audit_seal()


def verify(path: Path | str) -> str:
    out = io.StringIO()
    call_command("verify_audit_log", checkpoints=str(path), stdout=out)
    return out.getvalue()


def test_an_intact_log_matches_its_checkpoints(checkpoints: Path) -> None:
    seal(2)
    seal(2)
    assert (
        verify(checkpoints)
        == f"audit log intact: 4 event(s), chain verified; 2 checkpoint(s) from {checkpoints} match\n"
    )


def test_a_truncation_names_the_checkpoint_that_caught_it(checkpoints: Path) -> None:
    seal(2)
    earlier = head_row()
    seal(2)
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE seq > 2")
        cursor.execute(
            f"UPDATE {HEAD} SET last_seq = %s, last_hash = %s, count = %s, mac = %s",
            [earlier["last_seq"], earlier["last_hash"], earlier["count"], earlier["mac"]],
        )
    assert call_command("verify_audit_log") is None  # on its own, the shorter chain is consistent
    with pytest.raises(CommandError) as refusal:
        verify(checkpoints)
    assert str(refusal.value).startswith(
        "audit log BROKEN at checkpoint line 2: checkpoint line 2 records event #4 (sealed 20"
    )
    assert str(refusal.value).endswith(
        f"past the chain's end at #2: the newest events were deleted (the log was truncated) "
        f"(1 checkpoint(s) of {checkpoints} matched before it)"
    )


def test_the_chains_own_break_is_named_before_the_checkpoints(checkpoints: Path) -> None:
    seal(4)
    with as_table_owner() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE seq > 2")
    with pytest.raises(CommandError, match=r"BROKEN at event #3: the chain ends at event #2 but its head records #4"):
        verify(checkpoints)


def test_log_lines_exported_from_the_log_store_are_checkpoints_too(checkpoints: Path, tmp_path: Path) -> None:
    seal(3)
    (line,) = checkpoints.read_text().splitlines()
    cp = json.loads(line)
    exported = tmp_path / "exported.log"
    exported.write_text(
        f"2026-12-01 10:00:00 INFO condor.audit audit checkpoint seq={cp['seq']} hash={cp['hash']} at={cp['at']}\n\n"
    )
    assert verify(exported).endswith("; 1 checkpoint(s) from " + str(exported) + " match\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"seq": 1, "hash": "ab"}', "line 2: hash must be 64 lower-case hex digits"),
        ('{"seq": 0, "hash": "' + "a" * 64 + '"}', "line 2: seq must be a positive integer, got 0"),
        ('{"seq": true, "hash": "' + "a" * 64 + '"}', "line 2: seq must be a positive integer, got True"),
        ('{"seq": 1, "hash": ', "line 2: not valid JSON"),
        ("[1, 2]", "line 2: neither a JSON checkpoint nor an 'audit checkpoint' log line"),
        ("x" * 5000, "line 2: longer than 1024 characters, not a checkpoint"),
    ],
)
def test_a_line_that_is_no_checkpoint_is_named(checkpoints: Path, text: str, message: str) -> None:
    seal(1)
    checkpoints.write_text(checkpoints.read_text() + text + "\n")
    with pytest.raises(CommandError) as refusal:
        verify(checkpoints)
    assert str(refusal.value).startswith(f"checkpoint file {checkpoints}, {message}")


def test_a_file_without_newlines_is_refused_at_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    path.write_text("0" * 3_000_000)
    with pytest.raises(CommandError, match=r"line 1: longer than 1024 characters"):
        verify(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"cannot read the checkpoint file .*missing\.jsonl: No such file"):
        verify(tmp_path / "missing.jsonl")
