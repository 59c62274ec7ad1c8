"""One served catalog, on the demo as `make run` loads it (a revision awaiting review included): the gate, the policy
API, resolve and the tool page agree for every tool under every profile, and the check sees it when one of them
composes what is served differently."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from catalog.models import TierFloor
from catalog.services.demo import DEMO_DIR
from catalog.services.floors import tier_floor_remove
from catalog.services.imports import catalog_import
from tests.served.agreement import disagreements

pytestmark = pytest.mark.django_db


def _import_a_new_tool_with_the_pending_changes() -> None:
    """condor.json again, its pending changes kept, with a new mutating tool (never signed off: nothing is served
    of it under a clinical profile, everything under a non-clinical one)."""
    from catalog.services.demo import pending_manifest

    manifest = json.loads(pending_manifest((DEMO_DIR / "condor.json").read_bytes()))
    new = copy.deepcopy(next(t for t in manifest["tools"] if t["id"] == "signDocument"))
    new.update(id="countersignDocument", aliases=[])
    manifest["tools"].append(new)
    # A spelling added to a write tool: routed at once under a non-clinical profile, after sign-off under a
    # clinical one.
    book = next(t for t in manifest["tools"] if t["id"] == "bookAppointment")
    book["aliases"] = [*book.get("aliases", []), "book_now"]
    catalog_import(raw=json.dumps(manifest).encode("utf-8"), via="test")


def test_every_reader_serves_the_demo_alike(demo: None, make_user: Any) -> None:
    assert disagreements() == []
    _import_a_new_tool_with_the_pending_changes()
    assert disagreements() == []
    # A floor removal one officer proposed changes nothing anyone is served.
    floor = TierFloor.objects.get(policy_domain="medication")
    tier_floor_remove(floor_id=floor.pk, reason="covered elsewhere", removed_by=make_user("olga", "safety-officer"))
    assert disagreements() == []


def _gate_ignores_floors(monkeypatch: Any) -> None:
    monkeypatch.setattr("approvals.services.gate._with_floor", lambda served, proposed: served)


def _policy_api_serves_the_newest(monkeypatch: Any) -> None:
    monkeypatch.setattr("catalog.selectors.effect.declaration_for", lambda *, clinical, declared, in_effect: declared)


def _telemetry_routes_the_newest_spellings(monkeypatch: Any) -> None:
    from catalog.usage.catalog_index import UsageIndex

    find = UsageIndex.find
    monkeypatch.setattr(UsageIndex, "find", lambda self, name, system="", *, clinical=False: find(self, name, system))


def _resolve_serves_the_newest(monkeypatch: Any) -> None:
    from catalog.rag.domain.index import RagIndex

    monkeypatch.setattr(RagIndex, "served", lambda self, system, *, clinical: self.systems.get(system))


@pytest.mark.parametrize(
    "changed",
    [
        _gate_ignores_floors,
        _policy_api_serves_the_newest,
        _resolve_serves_the_newest,
        _telemetry_routes_the_newest_spellings,
    ],
    ids=lambda f: f.__name__,
)
def test_the_check_fails_when_one_reader_serves_otherwise(demo: None, monkeypatch: Any, changed: Any) -> None:
    _import_a_new_tool_with_the_pending_changes()
    changed(monkeypatch)
    assert disagreements() != []
