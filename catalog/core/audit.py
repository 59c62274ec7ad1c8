"""Writing, sealing and verifying the keyed hash chain of the audit log (see catalog.models.audit).

Sealing writes a checkpoint (position, hash, time) outside the database after every batch it commits: a log line
to the `condor.audit` logger and, when CONDOR_AUDIT_CHECKPOINT_FILE is set, a JSON line appended to that file.
`audit_verify_checkpoints` holds the chain against them, which catches what the key alone cannot: the newest
events deleted together with the head (or everything deleted), or the head put back to an earlier state.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import IO, Any
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils import timezone

from catalog.models import AuditChainHead, AuditEvent
from catalog.models.audit import GENESIS_HASH, head_mac

log = logging.getLogger("condor.audit")

# A checkpoint line is about 120 characters; anything far longer is not one (and is not read into memory whole).
MAX_CHECKPOINT_LINE = 1024
CHECKPOINT_CHUNK = 1000
LOG_LINE = re.compile(r"audit checkpoint seq=(?P<seq>\d{1,18}) hash=(?P<hash>[0-9a-f]{64})(?: at=(?P<at>\S{1,64}))?")
HASH = re.compile(r"[0-9a-f]{64}")


class AuditAction(StrEnum):
    """What an audit event records, by the exact string stored in AuditEvent.action (each member is named after
    its string). The strings are stored data: existing rows, the pages and filters that read them, and every
    event's MAC and chain hash hold them, so a value is never renamed; a new kind of event is a new member."""

    # The catalog: imported and reviewed revisions, waivers, tier floors, API tokens.
    CATALOG_REVISION_IMPORTED = "catalog.revision.imported"
    CATALOG_REVISION_REVIEWED = "catalog.revision.reviewed"
    CATALOG_WAIVER_GRANTED = "catalog.waiver.granted"
    CATALOG_WAIVER_REVOKED = "catalog.waiver.revoked"
    CATALOG_TIER_FLOOR_ADDED = "catalog.tier_floor.added"
    CATALOG_TIER_FLOOR_CHANGED = "catalog.tier_floor.changed"
    CATALOG_TIER_FLOOR_REMOVED = "catalog.tier_floor.removed"
    # A removal or lowering one officer proposed (nothing served changes), and a proposal kept back by any officer.
    CATALOG_TIER_FLOOR_WEAKENING_PROPOSED = "catalog.tier_floor.weakening_proposed"
    CATALOG_TIER_FLOOR_KEPT = "catalog.tier_floor.kept"
    CATALOG_API_TOKEN_CREATED = "catalog.api_token.created"
    CATALOG_API_TOKEN_REVOKED = "catalog.api_token.revoked"
    # MCP servers.
    MCP_SERVER_REACHED = "mcp.server.reached"
    MCP_SERVER_FAILED = "mcp.server.failed"
    MCP_REIMPORT_REQUESTED = "mcp.reimport.requested"
    # Usage: unknown tool names judged.
    USAGE_UNKNOWN_NAME_JUDGED = "usage.unknown_name.judged"
    # Cards.
    CARDS_IMPORT = "cards.import"
    CARDS_TRANSLATION_SAVED = "cards.translation.saved"
    CARDS_TRANSLATION_REVIEWED = "cards.translation.reviewed"
    CARDS_LOCALE_ADDED = "cards.locale.added"
    # Approval requests (the approvals app).
    APPROVALS_REQUEST_APPROVED = "approvals.request.approved"
    APPROVALS_REQUEST_REJECTED = "approvals.request.rejected"
    APPROVALS_REQUEST_CONSUMED = "approvals.request.consumed"
    APPROVALS_REQUEST_CANCELLED = "approvals.request.cancelled"
    APPROVALS_REQUEST_EXPIRED = "approvals.request.expired"
    APPROVALS_REQUEST_ESCALATED = "approvals.request.escalated"
    APPROVALS_REQUEST_SUSPENDED = "approvals.request.suspended"
    # Sign-in.
    SIGNIN_LOCKED = "signin.locked"
    # Writes in /admin/ (catalog.core.admin_audit): its LogEntry kinds, roles moved, a user's flags flipped.
    ADMIN_ADDED = "admin.added"
    ADMIN_CHANGED = "admin.changed"
    ADMIN_DELETED = "admin.deleted"
    AUTH_USER_GROUPS_ADDED = "auth.user.groups.added"
    AUTH_USER_GROUPS_REMOVED = "auth.user.groups.removed"
    AUTH_USER_PERMISSIONS_ADDED = "auth.user.permissions.added"
    AUTH_USER_PERMISSIONS_REMOVED = "auth.user.permissions.removed"
    AUTH_GROUP_PERMISSIONS_ADDED = "auth.group.permissions.added"
    AUTH_GROUP_PERMISSIONS_REMOVED = "auth.group.permissions.removed"
    AUTH_USER_FLAGS_CHANGED = "auth.user.flags.changed"


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
    *,
    actor: Actor,
    action: AuditAction,
    object_type: str,
    object_id: str | int | UUID,
    before: Any = None,
    after: Any = None,
) -> AuditEvent:
    """Append one event: one INSERT, no lock. Must run inside the transaction of the change it records; the
    event is sealed into the hash chain after that transaction commits (see catalog.models.audit)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit_record must run inside the transaction of the change it records")
    event = AuditEvent(
        actor_user=actor.user if actor.user is not None and actor.user.pk else None,
        actor=actor.label,
        # The member's plain string: the row, its MAC and its chain hash hold exactly what they always did.
        action=str(action),
        object_type=object_type,
        object_id=str(object_id),
        before=before,
        after=after,
    )
    event.save(force_insert=True)  # through AuditEvent.save(), the append-only guard, which also sets its MAC
    transaction.on_commit(_seal_soon)
    return event


def _seal_soon() -> None:
    # With a broker the beat seals in batches every few seconds (no extra work on the request path);
    # with none (the demo, unit tests) there is no beat, so seal right after commit.
    if not current_app.conf.task_always_eager:
        return
    try:
        audit_seal()
    except Exception:
        # The change and its event committed: a failed seal must not turn the answer into a 500. The beat, or
        # the next verification, seals the event; the log says why this one could not.
        log.exception("sealing the audit log after commit failed; the event stays unsealed until the next seal")


def _locked_head() -> AuditChainHead | None:
    """The head, locked; None when sealing must stop because the head was deleted or rewritten (sealing on would
    re-sign it, erasing the evidence; verify_audit_log names the break)."""
    head = AuditChainHead.objects.select_for_update().filter(singleton=True).first()
    if head is None:
        if AuditEvent.objects.filter(seq__isnull=False).exists():
            log.error("audit chain head is missing while sealed events exist: sealing stopped (verify_audit_log)")
            return None
        genesis = AuditChainHead(singleton=True)  # a new log: the first seal starts the chain
        AuditChainHead.objects.get_or_create(singleton=True, defaults={"mac": head_mac(genesis)})
        head = AuditChainHead.objects.select_for_update().get(singleton=True)
    if not hmac.compare_digest(head.mac, head_mac(head)):
        log.error(
            "audit chain head #%s was rewritten without the key: sealing stopped (verify_audit_log)", head.last_seq
        )
        return None
    return head


def _seal_batch(head: AuditChainHead, pending: list[AuditEvent]) -> int:
    """Chain the genuine events of `pending` onto the locked head; return how many."""
    genuine = [event for event in pending if event.mac_is_valid()]
    if len(genuine) < len(pending):
        forged = [event.pk for event in pending if not event.mac_is_valid()]
        # Left out of the chain, never deleted: verification names them until someone looks.
        log.error("%d audit event(s) without a valid MAC left unsealed (first id %s)", len(forged), forged[0])
    if not genuine:
        return 0
    seq, prev = head.last_seq, head.last_hash
    for event in genuine:
        seq += 1
        event.seq, event.prev_hash = seq, prev
        event.hash = prev = event.compute_hash()
    # The one sanctioned write to events: a plain QuerySet, not the append-only manager.
    events: models.QuerySet[AuditEvent] = models.QuerySet(model=AuditEvent)
    events.bulk_update(genuine, ["seq", "prev_hash", "hash"], batch_size=1000)
    head.last_seq, head.last_hash, head.count = seq, prev, head.count + len(genuine)
    head.mac = head_mac(head)
    AuditChainHead.objects.filter(pk=head.pk).update(
        last_seq=head.last_seq, last_hash=head.last_hash, count=head.count, mac=head.mac
    )
    return len(genuine)


def audit_seal(*, batch: int = 5000) -> int:
    """Seal committed, unsealed events with a valid MAC into the chain in id order; returns how many. Safe to run
    anywhere, any number of times at once: the head row's lock serialises sealers."""
    sealed = 0
    after = 0  # events without a valid MAC stay unsealed: step past them instead of reading them again
    while True:
        with transaction.atomic():
            head = _locked_head()
            if head is None:
                return sealed
            pending = list(AuditEvent.objects.filter(seq__isnull=True, pk__gt=after).order_by("pk")[:batch])
            if not pending:
                return sealed
            after = pending[-1].pk
            count = _seal_batch(head, pending)
        if count:
            sealed += count
            checkpoint_write(head.last_seq, head.last_hash)
        if len(pending) < batch:
            return sealed


def checkpoint_write(seq: int, chain_hash: str) -> None:
    """Record a committed seal outside the database: a log line, and a JSON line in CONDOR_AUDIT_CHECKPOINT_FILE."""
    at = timezone.now().isoformat()
    log.info("audit checkpoint seq=%d hash=%s at=%s", seq, chain_hash, at)
    path = getattr(settings, "CONDOR_AUDIT_CHECKPOINT_FILE", "")
    if not path:
        return
    line = json.dumps({"seq": seq, "hash": chain_hash, "at": at}, separators=(",", ":")) + "\n"
    try:
        # One write() to a file opened O_APPEND: lines from many processes never interleave; fsync before
        # returning, so a checkpoint that was logged is on disk.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        # The seal committed; losing one checkpoint weakens the anchor but must not fail the write it sealed.
        log.error("could not append audit checkpoint seq=%d to %s: %s", seq, path, exc)


@dataclass(frozen=True)
class AuditVerification:
    checked: int
    broken_at: int | None = None  # the chain position of the first broken link, when the break is in the chain
    reason: str = ""
    place: str = ""  # where, in words: "event #3", "the chain head", "unsealed event id 17", "checkpoint line 4"

    @property
    def ok(self) -> bool:
        return not self.reason


def audit_verify(*, seal: bool = True) -> AuditVerification:
    """Seal what is pending (unless told not to), then check the head, recompute the chain from its first
    position and check the events left unsealed; report the first break: a missing or rewritten head, an
    edited event (its MAC or hash no longer match; recomputing them needs the key), a deleted event (a gap),
    deleted newest events (the head records more), or a forged event (no valid MAC, kept out of the chain)."""
    if seal:
        audit_seal()
    # The head first: events sealed after this read (by a sealer running meanwhile) lie beyond it and are left
    # for the next verification, instead of looking like a chain that outgrew its head.
    head = AuditChainHead.objects.filter(singleton=True).first()
    if head is None:
        sealed = AuditEvent.objects.filter(seq__isnull=False).count()
        if sealed:
            # The first seal creates the head and seals its events in one transaction: committed between the two
            # reads above, it shows its events but not yet its head. Read the head again, after the events.
            head = AuditChainHead.objects.filter(singleton=True).first()
        if sealed and head is None:
            return AuditVerification(
                0,
                None,
                f"the chain head row is missing while {sealed} sealed event(s) exist: it was deleted",
                place="the chain head",
            )
    if head is not None and not hmac.compare_digest(head.mac, head_mac(head)):
        return AuditVerification(
            0,
            None,
            f"the chain head (#{head.last_seq}) was rewritten: its MAC does not match, and only the sealer, "
            "which holds the key, moves it (or CONDOR_AUDIT_KEY is not the key the log was sealed with)",
            place="the chain head",
        )
    chain = _verify_chain(head)
    if not chain.ok:
        return chain
    return _verify_unsealed(chain.checked)


def _broken(checked: int, seq: int, reason: str) -> AuditVerification:
    return AuditVerification(checked, seq, reason, place=f"event #{seq}")


def _verify_chain(head: AuditChainHead | None) -> AuditVerification:
    expected = 1
    prev_hash = GENESIS_HASH
    checked = 0
    sealed = AuditEvent.objects.filter(seq__isnull=False).order_by("seq")
    if head is not None:
        sealed = sealed.filter(seq__lte=head.last_seq)
    for event in sealed.iterator(chunk_size=2000):
        if event.seq != expected:
            return _broken(checked, expected, f"event #{expected} is missing (deleted); the next event is #{event.seq}")
        if event.prev_hash != prev_hash:
            return _broken(checked, expected, f"event #{expected} does not link to the hash of event #{expected - 1}")
        if not event.mac_is_valid():
            return _broken(checked, expected, f"event #{expected} was edited: its contents no longer match its MAC")
        if event.hash is None or not hmac.compare_digest(event.hash, event.compute_hash()):
            return _broken(
                checked, expected, f"event #{expected} was edited: its position or hash no longer match its seal"
            )
        prev_hash = event.hash
        expected += 1
        checked += 1
    last = expected - 1
    if head is not None and (head.last_seq != last or head.last_hash != prev_hash):
        return _broken(
            checked,
            last + 1,
            f"the chain ends at event #{last} but its head records #{head.last_seq}: "
            "the newest event(s) were deleted or the head was edited",
        )
    return AuditVerification(checked)


def _verify_unsealed(checked: int) -> AuditVerification:
    forged = [
        event.pk
        for event in AuditEvent.objects.filter(seq__isnull=True).order_by("pk").iterator(chunk_size=2000)
        if not event.mac_is_valid()
    ]
    if not forged:
        return AuditVerification(checked)
    more = f"; {len(forged) - 1} more forged event(s) after it" if len(forged) > 1 else ""
    return AuditVerification(
        checked,
        None,
        f"forged unsealed event id {forged[0]}: it has no valid MAC, so the application did not write it "
        f"(it is kept out of the chain){more}",
        place=f"unsealed event id {forged[0]}",
    )


class CheckpointUnreadable(ValueError):
    """A line of a checkpoint file that is not a checkpoint; the message names the line."""


@dataclass(frozen=True)
class Checkpoint:
    line: int
    seq: int
    hash: str
    at: str


def checkpoint_parse(number: int, text: str) -> Checkpoint | None:
    """One line of a checkpoint file: a JSON object {"seq", "hash", "at"} as the sealer appends it, or a
    `condor.audit` log line (`audit checkpoint seq=N hash=H at=T`, e.g. exported from the log store); blank
    lines are skipped."""
    if len(text) > MAX_CHECKPOINT_LINE:
        raise CheckpointUnreadable(f"line {number}: longer than {MAX_CHECKPOINT_LINE} characters, not a checkpoint")
    stripped = text.strip()
    if not stripped:
        return None
    if not stripped.startswith("{"):
        match = LOG_LINE.search(stripped)
        if match is None:
            raise CheckpointUnreadable(f"line {number}: neither a JSON checkpoint nor an 'audit checkpoint' log line")
        return Checkpoint(number, int(match["seq"]), match["hash"], match["at"] or "")
    try:
        data = json.loads(stripped)
    except ValueError as exc:
        raise CheckpointUnreadable(f"line {number}: not valid JSON ({exc})") from None
    seq, chain_hash, at = (data.get(k) if isinstance(data, dict) else None for k in ("seq", "hash", "at"))
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise CheckpointUnreadable(f"line {number}: seq must be a positive integer, got {seq!r}")
    if not isinstance(chain_hash, str) or not HASH.fullmatch(chain_hash):
        raise CheckpointUnreadable(f"line {number}: hash must be 64 lower-case hex digits")
    return Checkpoint(number, seq, chain_hash, at if isinstance(at, str) else "")


def _chunks(lines: Iterable[str]) -> Iterator[list[Checkpoint]]:
    chunk: list[Checkpoint] = []
    for number, text in enumerate(lines, start=1):
        checkpoint = checkpoint_parse(number, text)
        if checkpoint is not None:
            chunk.append(checkpoint)
        if len(chunk) >= CHECKPOINT_CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def checkpoint_lines(file: IO[str]) -> Iterator[str]:
    """The lines of an open checkpoint file, each read at most one character past the longest a checkpoint may
    be: a file that is not one (no newlines in gigabytes) is refused at its first line, not read into memory."""
    while line := file.readline(MAX_CHECKPOINT_LINE + 1):
        yield line


def audit_verify_checkpoints(lines: Iterable[str]) -> AuditVerification:
    """Hold the chain against checkpoints written outside the database (the chain itself verified first, by
    audit_verify): a checkpoint past the chain's end means the newest events were deleted (truncation); one whose
    hash differs from the event's at that position means the chain was rewritten. Raises CheckpointUnreadable
    for a line that is not a checkpoint. `checked` counts the checkpoints."""
    checked = 0
    for chunk in _chunks(lines):
        hashes = dict(AuditEvent.objects.filter(seq__in={c.seq for c in chunk}).values_list("seq", "hash").order_by())
        for checkpoint in chunk:
            where = f"checkpoint line {checkpoint.line}"
            sealed_at = f" (sealed {checkpoint.at})" if checkpoint.at else ""
            if checkpoint.seq not in hashes:
                end = AuditEvent.objects.filter(seq__isnull=False).aggregate(end=models.Max("seq"))["end"] or 0
                what = (
                    f"past the chain's end at #{end}: the newest events were deleted (the log was truncated)"
                    if checkpoint.seq > end
                    else "but the chain has no such event: it was deleted"
                )
                return AuditVerification(
                    checked, checkpoint.seq, f"{where} records event #{checkpoint.seq}{sealed_at}, {what}", place=where
                )
            if hashes[checkpoint.seq] != checkpoint.hash:
                return AuditVerification(
                    checked,
                    checkpoint.seq,
                    f"{where} records event #{checkpoint.seq} with hash {checkpoint.hash[:12]}…{sealed_at}, the "
                    f"chain has {str(hashes[checkpoint.seq])[:12]}…: the chain was rewritten at or before "
                    f"event #{checkpoint.seq}",
                    place=where,
                )
            checked += 1
    return AuditVerification(checked)
