"""Audit event types are an enum, not free strings: every event the app writes names an AuditAction member, and
the members keep the strings existing rows (and their MACs and chain hashes) already hold."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.db import transaction

from catalog.core.audit import Actor, AuditAction, audit_record, audit_verify
from catalog.models import AuditEvent
from catalog.models.audit import keyed_hash

ROOT = Path(__file__).resolve().parents[3]

# The strings written before the enum existed. Stored data: a member's value is never renamed.
STORED = {
    "admin.added",
    "admin.changed",
    "admin.deleted",
    "approvals.request.approved",
    "approvals.request.cancelled",
    "approvals.request.consumed",
    "approvals.request.escalated",
    "approvals.request.expired",
    "approvals.request.rejected",
    "approvals.request.suspended",
    "auth.group.permissions.added",
    "auth.group.permissions.removed",
    "auth.user.flags.changed",
    "auth.user.groups.added",
    "auth.user.groups.removed",
    "auth.user.permissions.added",
    "auth.user.permissions.removed",
    "cards.import",
    "cards.locale.added",
    "cards.translation.reviewed",
    "cards.translation.saved",
    "catalog.api_token.created",
    "catalog.api_token.revoked",
    "catalog.revision.imported",
    "catalog.revision.reviewed",
    "catalog.tier_floor.added",
    "catalog.tier_floor.changed",
    "catalog.tier_floor.kept",
    "catalog.tier_floor.removed",
    "catalog.tier_floor.weakening_proposed",
    "catalog.waiver.granted",
    "catalog.waiver.revoked",
    "mcp.reimport.requested",
    "mcp.server.failed",
    "mcp.server.reached",
    "signin.locked",
    "usage.unknown_name.judged",
}


def test_the_members_keep_the_strings_existing_rows_hold() -> None:
    assert {action.value for action in AuditAction} == STORED


def test_each_member_is_named_after_its_string() -> None:
    assert [a.name for a in AuditAction if a.name != a.value.upper().replace(".", "_")] == []


def called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def audit_record_calls() -> list[tuple[str, ast.Call]]:
    """Every call of audit_record in the app packages, with where it is."""
    return [
        (f"{path.relative_to(ROOT)}:{node.lineno}", node)
        for package in ("catalog", "approvals", "condor_admin")
        for path in sorted((ROOT / package).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and called_name(node) == "audit_record"
    ]


def spells_a_string(node: ast.expr) -> bool:
    """A str literal, an f-string, or a string built from pieces (concatenated, formatted, joined)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call)


def test_app_code_never_writes_an_event_with_a_free_string() -> None:
    """mypy holds audit_record's `action` to AuditAction; this holds the call sites without it, f-strings included."""
    calls = audit_record_calls()
    assert len(calls) >= 25, "the guard no longer finds the call sites"  # floors.py writes through one helper
    offenders = [
        where
        for where, call in calls
        for keyword in call.keywords
        if keyword.arg == "action" and spells_a_string(keyword.value)
    ]
    assert offenders == []


def test_a_member_hashes_exactly_as_its_plain_string_did() -> None:
    content = {"action": "signin.locked", "object_type": "auth.user", "object_id": "ada"}
    assert keyed_hash(["event", {**content, "action": AuditAction.SIGNIN_LOCKED}]) == keyed_hash(["event", content])


@pytest.mark.django_db
def test_an_event_stores_the_plain_string_and_verifies() -> None:
    with transaction.atomic():
        event = audit_record(actor=Actor("cli"), action=AuditAction.SIGNIN_LOCKED, object_type="auth.user", object_id=1)
    assert type(event.action) is str and event.action == "signin.locked"
    stored = AuditEvent.objects.get(pk=event.pk)
    assert stored.action == "signin.locked" and stored.mac == event.mac and stored.mac_is_valid()
    assert audit_verify().ok
