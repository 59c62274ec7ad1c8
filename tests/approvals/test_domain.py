"""Canonical arguments and hashing, expiry, consume refusals and readable arguments: pure functions."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest

from approvals.display import label_for, readable_args, short_id
from approvals.domain import (
    ArgsError,
    args_sha256,
    canonical_args,
    consume_refusal,
    effective_state,
    request_ttl,
)

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
UUID = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"


def test_canonical_args_sort_keys_at_every_depth_without_whitespace() -> None:
    assert canonical_args({"b": 1, "a": {"z": [1, {"y": 2, "x": 3}], "c": "ü"}}) == (
        '{"a":{"c":"ü","z":[1,{"x":3,"y":2}]},"b":1}'
    )


def test_the_hash_is_sha256_of_the_canonical_utf8_text() -> None:
    args = {"dose": "500 mg", "drug": "Amoxicillin"}
    assert args_sha256(args) == hashlib.sha256(b'{"dose":"500 mg","drug":"Amoxicillin"}').hexdigest()


def test_key_order_and_integral_floats_do_not_change_the_hash() -> None:
    assert args_sha256({"a": 1, "b": 2.0}) == args_sha256({"b": 2, "a": 1.0})
    assert args_sha256({"a": 1.5}) != args_sha256({"a": 1})


def test_a_changed_value_changes_the_hash() -> None:
    assert args_sha256({"dose": "500 mg"}) != args_sha256({"dose": "5000 mg"})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"x": float("nan")}, "args.x: nan is not a JSON number"),
        ({"x": {1: "a"}}, "args.x: object keys must be strings"),
        ({"x": [object()]}, "args.x[0]: object is not a JSON value"),
    ],
)
def test_arguments_that_are_not_json_are_refused_with_their_location(args: dict, message: str) -> None:
    with pytest.raises(ArgsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        canonical_args(args)


def test_ttl_defaults_per_tier_and_overrides_within_limits() -> None:
    limits = {"defaults": {"high": 900, "low": 3600, "ungated": 900}, "minimum": 30, "maxima": {"high": 7200}}
    assert request_ttl(tier_key="high", requested=None, **limits) == 900
    assert request_ttl(tier_key="low", requested=None, **limits) == 3600
    assert request_ttl(tier_key="high", requested=60, **limits) == 60
    with pytest.raises(ValueError, match=r"ttlSeconds: 10 is outside 30\.\.7200 for tier high"):
        request_ttl(tier_key="high", requested=10, **limits)
    with pytest.raises(ValueError, match="omit it for the default of 900 s"):
        request_ttl(tier_key="high", requested=7201, **limits)


def test_a_pending_request_past_its_expiry_reads_as_expired() -> None:
    assert effective_state("pending", NOW - timedelta(seconds=1), NOW) == "expired"
    assert effective_state("pending", NOW, NOW) == "expired"
    assert effective_state("pending", NOW + timedelta(seconds=1), NOW) == "pending"
    assert effective_state("approved", NOW - timedelta(days=1), NOW) == "approved"


def refusal(state: str, *, presented: str = "a" * 64, expires: int = 60, window: int | None = 60) -> str | None:
    found = consume_refusal(
        state=state,
        expires_at=NOW + timedelta(seconds=expires),
        consumable_until=None if window is None else NOW + timedelta(seconds=window),
        approved_sha256="a" * 64 if state in ("approved", "consumed") else None,
        presented_sha256=presented,
        now=NOW,
    )
    return found[0] if found else None


def test_consume_is_allowed_only_for_an_approved_request_with_the_approved_hash() -> None:
    assert refusal("approved") is None
    assert refusal("approved", presented="b" * 64) == "args-mismatch"
    assert refusal("approved", window=-1) == "approval-lapsed"
    assert refusal("pending") == "not-decided"
    assert refusal("pending", expires=-1) == "expired"
    assert refusal("rejected") == "rejected"
    assert refusal("expired") == "expired"
    assert refusal("cancelled") == "cancelled"
    assert refusal("consumed") == "already-consumed"


def test_uuids_are_shortened_for_display() -> None:
    assert short_id(f"patient {UUID}") == "patient 3f2a61d0…9c1d"
    assert short_id("no id here") == "no id here"


def test_labels_come_from_the_schema_else_from_the_key() -> None:
    schema = {"properties": {"patientId": {"description": "Patient id (UUID)."}, "pzn": {"title": "PZN"}}}
    assert label_for("patientId", schema) == "Patient id"
    assert label_for("pzn", schema) == "PZN"
    assert label_for("dosageInstructions", schema) == "Dosage instructions"
    assert label_for("pack_size", None) == "Pack size"


def test_readable_args_follow_the_schema_order_and_mark_edits() -> None:
    schema = {"properties": {"patientId": {"description": "Patient id (UUID)."}, "dose": {}, "autIdem": {}}}
    proposed = {"dose": "1-0-1", "patientId": UUID, "extra": [1, 2], "autIdem": True}
    rows = readable_args(proposed, schema)
    assert [r.key for r in rows] == ["patientId", "dose", "autIdem", "extra"]
    patient = rows[0]
    assert patient.display == "3f2a61d0…9c1d" and patient.full == UUID and patient.shortened
    assert rows[2].display == "yes" and rows[3].display == "[1, 2]"
    approved = readable_args({"dose": "1-0-0", "patientId": UUID}, schema, compare_to=proposed)
    assert {r.key: r.changed for r in approved} == {"patientId": False, "dose": True, "autIdem": True, "extra": True}
