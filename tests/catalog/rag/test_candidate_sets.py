"""Resolve remembers what it served: each candidate set it answers is kept (catalog.models.CandidateSet), with the
canonical keys of its tools in order, so the approvals gate and the telemetry ingest can check a call against it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from catalog.models import CandidateSet


@pytest.fixture
def demo_embedded(shared_demo_embedded: None) -> None:
    """The demo, imported and embedded once for the module (tests/catalog/rag/conftest.py)."""


def test_a_served_set_is_remembered_with_its_tools_in_order(resolve: Callable[..., Any]) -> None:
    before = timezone.now()
    snapshot = resolve(prompt="Blutdruck und Puls eintragen", attachments=True)
    row = CandidateSet.objects.get(set_id=snapshot["candidateSetId"])
    assert row.tool_keys == snapshot["toolIds"] and row.tool_keys[0] == "read.attachment"  # floors lead, as served
    assert (row.system, row.profile) == (snapshot["system"], "clinical-production")
    assert row.created_at >= before and row.last_served_at == row.created_at


def test_serving_a_set_again_moves_its_time_and_adds_no_row(resolve: Callable[..., Any]) -> None:
    first = resolve(prompt="show the medication list")
    row = CandidateSet.objects.get(set_id=first["candidateSetId"])
    CandidateSet.objects.filter(pk=row.pk).update(last_served_at=row.last_served_at - timedelta(hours=5))
    again = resolve(prompt="show the medication list")
    assert again["candidateSetId"] == first["candidateSetId"]
    assert CandidateSet.objects.count() == 1
    moved = CandidateSet.objects.get(pk=row.pk)
    assert moved.last_served_at > row.last_served_at and moved.created_at == row.created_at


def test_each_different_set_is_its_own_row(resolve: Callable[..., Any]) -> None:
    a = resolve(prompt="Termin nächste Woche buchen", topK=8)
    b = resolve(prompt="Termin nächste Woche buchen", topK=3)
    assert a["candidateSetId"] != b["candidateSetId"]
    assert set(CandidateSet.objects.values_list("set_id", flat=True)) == {a["candidateSetId"], b["candidateSetId"]}


def test_a_refused_resolve_remembers_nothing(resolve: Callable[..., Any]) -> None:
    resolve(expect=422, prompt="anything", profile="no-such-profile")
    assert not CandidateSet.objects.exists()
