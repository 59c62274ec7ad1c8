"""The safety officer's story, end to end through the runtime's API (runs on SQLite and, in CI, on PostgreSQL):
a signed-off catalog, then a revision that lowers tier-high tools and rewrites a mutating tool's description.
Until two safety officers other than the importer sign it off, the runtime is served what was signed off."""

from __future__ import annotations

import importlib
import itertools
import json
import uuid
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.test import Client

from catalog.core import roles
from catalog.models import CatalogRevision, TierFloor, Tool
from catalog.selectors.floors import tier_floors_forget
from catalog.services.governance import GovernanceRefused
from catalog.services.imports import catalog_import
from catalog.services.signoff import revision_review
from tests.conftest import tasks_in_process

pytestmark = pytest.mark.django_db(transaction=True)
SEED = importlib.import_module("catalog.migrations.0012_tier_floors")


@pytest.fixture(autouse=True)
def _seeded_floors() -> None:
    """The Condor seed's tier floors, as the migration seeds them: a transactional test starts from a flushed
    database (the floors a data migration wrote are gone)."""
    if not TierFloor.objects.exists():
        SEED.seed_floors(django_apps, None)
    tier_floors_forget()


OLD_NOTE = (
    "USE WHEN the clinician dictates a new clinical note for the current visit\n"
    "DO NOT USE WHEN an existing draft should be changed\n"
    "REQUIRES patientId, encounterId and the note text\n"
    "PRODUCES an unsigned draft note linked to the encounter"
)
NEW_NOTE = OLD_NOTE.replace("an unsigned draft note", "a signed note, filed without review")
_keys = itertools.count(1)


def _catalog(manifests: Any, *, lowered: bool) -> bytes:
    m = manifests
    tools = [
        m.mutate_tool("signDocument", module="document", policyDomain="document", hitlTier="high"),
        m.mutate_tool("dischargePatient", module="patient", policyDomain="patient", hitlTier="high"),
        m.mutate_tool(
            "recordClinicalNote", module="note", policyDomain="note", hitlTier="low", ragDescription=OLD_NOTE
        ),
        m.condor_tool("listActiveMedications"),
    ]
    tools[2]["ragDescription"] = OLD_NOTE
    if lowered:
        tools[0]["hitlTier"] = "low"
        tools[1]["hitlTier"] = "low"
        tools[2]["ragDescription"] = NEW_NOTE
    return m.encode(m.condor(tools, forcedFloors=[], baselineCount=4))


class Runtime:
    def __init__(self, client: Client, token: str) -> None:
        self.client, self.auth = client, {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def evaluate(self, tool: str) -> dict[str, Any]:
        # Each call is for a patient of its own: the same tool, patient and arguments again within the duplicate
        # window would be a possible duplicate (tests/approvals/test_duplicates.py), which this story is not about.
        patient = str(uuid.uuid4())
        body = {
            "tool": tool,
            "profile": "clinical-production",
            "dispatchMode": "operator",
            "runId": "run-1",
            "requestedBy": "dr.house",
            "patientRef": patient,
            "args": {"patientId": patient},
            "idempotencyKey": f"story-{next(_keys)}",
        }
        response = self.client.post("/api/v1/approvals/evaluate", body, content_type="application/json", **self.auth)
        assert response.status_code in (200, 201, 422), response.content  # allow, suspend, refuse
        return response.json()

    def policy(self, tool: str) -> dict[str, Any]:
        response = self.client.get(
            f"/api/v1/catalog/tools/condor/{tool}/policy", {"profile": "clinical-production"}, **self.auth
        )
        assert response.status_code == 200, response.content
        return response.json()

    def served_note(self) -> str:
        body = {"prompt": "dictate a clinical note for this visit", "profile": "clinical-production", "topK": 4}
        response = self.client.post("/api/v1/rag/resolve", body, content_type="application/json", **self.auth)
        assert response.status_code == 200, response.content
        snapshot = response.json()
        assert "record.clinical.note" in snapshot["ragDescriptions"], snapshot
        return snapshot["ragDescriptions"]["record.clinical.note"]


@pytest.fixture
def people(make_user: Any) -> dict[str, Any]:
    return {
        "importer": make_user("ines", roles.CATALOG_ADMIN, roles.SAFETY_OFFICER),
        "first": make_user("olga", roles.SAFETY_OFFICER),
        "second": make_user("omar", roles.SAFETY_OFFICER),
    }


def _approve(revision: CatalogRevision, who: Any) -> Any:
    return revision_review(revision_id=revision.pk, reviewer=who, decision="approved", comment="checked the diff")


def test_nothing_weaker_reaches_a_clinical_profile_before_two_officers_sign_off(
    manifests: Any, people: dict[str, Any], make_token: Any
) -> None:
    runtime = Runtime(Client(), make_token("runtime", scopes=("approvals", "rag", "catalog:read")))
    with tasks_in_process():
        first = catalog_import(raw=_catalog(manifests, lowered=False), via="test", imported_by=people["importer"])
        assert runtime.evaluate("signDocument")["reason"] == "awaiting-signoff"  # never signed off: absent
        _approve(first.revision, people["first"])
        assert _approve(first.revision, people["second"]).in_effect
        lowered = catalog_import(raw=_catalog(manifests, lowered=True), via="test", imported_by=people["importer"])
    revision = lowered.revision
    assert revision.review_state == "pending-review" and revision.signoffs_required == 2

    # The lowering waits: operator mode still suspends, resolve serves the old text, the policy API says so.
    held = runtime.evaluate("signDocument")
    assert held["decision"] == "suspend", held
    assert runtime.evaluate("dischargePatient")["reason"] == "tier-high"
    assert runtime.served_note() == OLD_NOTE
    policy = runtime.policy("dischargePatient")
    assert policy["awaitingSignoff"] and policy["hitlTier"] == "high" and policy["revisionInEffect"] == 1

    with pytest.raises(GovernanceRefused, match="you imported condor r2") as refused:
        _approve(revision, people["importer"])
    assert refused.value.forbidden
    once = _approve(revision, people["first"])
    assert (once.approvals, once.required, once.in_effect) == (1, 2, False)
    with pytest.raises(GovernanceRefused, match="you already approved"):
        _approve(revision, people["first"])
    assert runtime.evaluate("dischargePatient")["reason"] == "tier-high"  # one officer is not enough

    with tasks_in_process():
        twice = _approve(revision, people["second"])
    assert twice.in_effect and twice.applied == 3
    # The next evaluate answers by the new declaration, and a tool under a floor stays at the floor.
    assert runtime.evaluate("dischargePatient")["reason"] == "tier-low-operator"
    signed = runtime.evaluate("signDocument")
    assert signed["decision"] == "suspend" and signed["reason"] == "tier-high"
    policy = runtime.policy("signDocument")
    assert (policy["declaredHitlTier"], policy["hitlTier"], policy["awaitingSignoff"]) == ("low", "high", False)
    assert policy["floors"] and policy["revisionInEffect"] == 2
    assert runtime.served_note() == NEW_NOTE


def test_requesting_changes_keeps_what_is_in_effect(manifests: Any, people: dict[str, Any]) -> None:
    with tasks_in_process():
        first = catalog_import(raw=_catalog(manifests, lowered=False), via="test", imported_by=people["importer"])
        _approve(first.revision, people["first"])
        _approve(first.revision, people["second"])
        lowered = catalog_import(raw=_catalog(manifests, lowered=True), via="test", imported_by=people["importer"])
    revision_review(
        revision_id=lowered.revision.pk, reviewer=people["first"], decision="changes-requested", comment="no"
    )
    revision = CatalogRevision.objects.get(pk=lowered.revision.pk)
    assert revision.review_state == "changes-requested"
    assert Tool.objects.get(declared_id="dischargePatient").in_effect["hitl_tier"] == "high"
    # An approval given before the request no longer counts: two fresh approvals are needed.
    again = _approve(revision, people["second"])
    assert (again.approvals, again.in_effect) == (1, False)


def test_only_the_newest_undecided_revision_is_approved_and_its_sign_off_covers_the_older(
    manifests: Any, people: dict[str, Any]
) -> None:
    with tasks_in_process():
        first = catalog_import(raw=_catalog(manifests, lowered=False), via="test", imported_by=people["importer"])
        _approve(first.revision, people["first"])
        _approve(first.revision, people["second"])
        r2 = catalog_import(raw=_catalog(manifests, lowered=True), via="test", imported_by=people["importer"])
        extra = manifests.condor_tool("listVitals", module="vitals")
        raw = manifests.encode(
            {**manifests.condor([], forcedFloors=[]), "tools": [*_tools_of(manifests), extra], "baselineCount": 5}
        )
        r3 = catalog_import(raw=raw, via="test", imported_by=people["importer"])
    with pytest.raises(GovernanceRefused, match="condor r3 is newer"):
        _approve(r2.revision, people["first"])
    _approve(r3.revision, people["first"])
    assert _approve(r3.revision, people["second"]).in_effect
    older = CatalogRevision.objects.get(pk=r2.revision.pk)
    assert older.review_state == "superseded" and older.superseded_by_id == r3.revision.pk


def _tools_of(manifests: Any) -> list[dict[str, Any]]:
    return json.loads(_catalog(manifests, lowered=True))["tools"]
