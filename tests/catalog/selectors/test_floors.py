"""Reading the tier floors: the seeded reservation, a change seen by the next call, what each floor catches."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from catalog.models import TierFloor
from catalog.selectors.floors import floors_overview, tier_floors, tier_floors_forget
from catalog.services.imports import catalog_import
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

SEEDED = [
    "domain:medication",
    "domain:medications@tucan",
    "pattern:*.charge*",
    "pattern:*document*sign*",
    "pattern:*prescri*",
    "pattern:*sign*document*",
    "pattern:charge*",
    "pattern:sign.*",
]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    tier_floors_forget()


def test_the_migration_seeds_the_condor_seeds_reservation_as_high_floors() -> None:
    floors = tier_floors()
    assert sorted(f.id for f in floors) == SEEDED
    assert {f.min_tier for f in floors} == {"high"}
    assert all(f.reason.startswith("Condor seed: tier high is reserved") for f in floors)


def test_an_unchanged_table_costs_one_query_and_a_change_anywhere_is_seen_by_the_next_call(
    django_assert_num_queries: Any,
) -> None:
    tier_floors()
    with django_assert_num_queries(1):
        first = tier_floors()
    # Another process lowers a floor: this process only sees the row change through the version it checks.
    TierFloor.objects.filter(policy_domain="medication").update(min_tier="low", updated_at=timezone.now())
    with django_assert_num_queries(2):
        second = tier_floors()
    assert {f.id: f.min_tier for f in first}["domain:medication"] == "high"
    assert {f.id: f.min_tier for f in second}["domain:medication"] == "low"


def test_a_removed_floor_is_gone_at_the_next_call() -> None:
    assert "pattern:sign.*" in {f.id for f in tier_floors()}
    TierFloor.objects.filter(pattern="sign.*").delete()
    assert "pattern:sign.*" not in {f.id for f in tier_floors()}


def test_floors_are_plain_values_the_gate_can_match() -> None:
    [medication] = [f for f in tier_floors() if f.id == "domain:medication"]
    assert (medication.policy_domain, medication.pattern, medication.system) == ("medication", None, None)
    assert medication.pk == TierFloor.objects.get(policy_domain="medication").pk


def import_demo() -> None:
    for name in ("condor.json", "tucan.json"):
        catalog_import(raw=(ROOT / "catalog" / "demo" / name).read_bytes(), via="test")


def caught(rows: Any) -> dict[str, list[str]]:
    return {
        r.floor.key: [f"{t.declared_id}{'' if t.hitl_tier else '∅'}{'!' if t.below else ''}" for t in r.caught]
        for r in rows
    }


def test_the_seeded_floors_catch_the_demos_high_stakes_writes(django_assert_num_queries: Any) -> None:
    """Which demo tools each seeded floor catches (!: declared below it; ∅: no tier, as TUCAN tools declare none,
    which mutate-without-hitl reports: the gate applies the floor to both)."""
    import_demo()
    with django_assert_num_queries(2):
        rows = floors_overview()
    assert caught(rows) == {
        # "billing charge": chargeBill; createInvoiceDraft (a draft, tier low) charges nobody and is not caught.
        "pattern:*.charge*": [],
        "pattern:charge*": ["chargeBill"],
        "domain:medication": [
            "adjustMedicationDose",
            "discontinueMedication",
            "prescribeMedication",
            "renewPrescription",
        ],
        "domain:medications@tucan": ["add-medication∅", "discontinue-medication∅"],
        "pattern:*document*sign*": [],
        "pattern:*prescri*": [
            "prescribeMedication",
            "renewPrescription",
            "cancel-prescription∅",
            "create-prescription∅",
            "renew-prescription∅",
            "send-e-prescription∅",
        ],
        "pattern:*sign*document*": ["signDocument"],
        "pattern:sign.*": ["signDocument", "sign-clinical-note∅"],
    }
    prescri = {r.floor.key: r for r in rows}["pattern:*prescri*"]
    assert (prescri.below_count, prescri.undeclared_count) == (0, 4)
    assert [r.floor.key for r in rows][:2] == ["domain:medication", "domain:medications@tucan"]


def test_the_overview_reads_two_queries_whatever_the_number_of_tools(
    manifests: Any, django_assert_num_queries: Any
) -> None:
    tools = [manifests.mutate_tool(f"prescribeThing{i}", hitlTier="low") for i in range(150)]
    catalog_import(raw=manifests.encode(manifests.condor(tools, baselineCount=150, forcedFloors=[])), via="test")
    TierFloor.objects.create(pattern="*thing1*", min_tier="high", reason="many")
    with django_assert_num_queries(2):
        rows = floors_overview()
    by_key = {r.floor.key: r for r in rows}
    assert len(by_key["pattern:*prescri*"].caught) == 150
    assert by_key["pattern:*prescri*"].below_count == 150
    assert len(by_key["pattern:*thing1*"].caught) == 61  # thing1, thing10-19, thing100-149
