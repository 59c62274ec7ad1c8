"""One served catalog, on generated catalogs the project has never seen: two systems signed off, then an import that
changes a random share of the tools in every governed way (tier lowered or raised, mutating flipped, availability
widened or narrowed, text rewritten, an alias added or dropped, module and category moved under a floor, tools added
and removed), left awaiting sign-off, with a floor added and a floor removal proposed. Whatever the seed, the gate,
the policy API, resolve and the tool page serve every tool under every profile alike."""

from __future__ import annotations

import random
from typing import Any

import pytest

from catalog.models import TierFloor, Tool
from catalog.services.floors import tier_floor_add, tier_floor_remove
from catalog.services.imports import catalog_import
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, sign_off, tucan_manifest, tucan_tool
from tests.served.agreement import disagreements

pytestmark = pytest.mark.django_db

MODULES = ("medication", "billing", "appointment", "document", "lab")
CATEGORIES = ("ui", "medications", "prescriptions", "appointments")


def _condor_tool(rng: random.Random, i: int) -> dict[str, Any]:
    module = rng.choice(MODULES)
    domain = rng.choice([module, None])
    availability = rng.choice(["production", "production", "preview", "demo-only"])
    if rng.random() < 0.5:
        return mutate_tool(
            f"tool{i}",
            module=module,
            policyDomain=domain,
            availability=availability,
            hitlTier=rng.choice(["low", "high"]),
        )
    return condor_tool(f"tool{i}", module=module, policyDomain=domain or module, availability=availability)


def _changed(rng: random.Random, tool: dict[str, Any], i: int) -> dict[str, Any]:
    """One governed change of a Condor tool, chosen at random."""
    tool = dict(tool)
    kind = rng.randrange(7)
    if kind == 0 and tool["mutating"]:
        tool["hitlTier"] = "low" if tool["hitlTier"] == "high" else "high"
    elif kind == 1:
        tool["availability"] = rng.choice(["production", "preview", "demo-only"])
    elif kind == 2:
        tool["ragDescription"] = tool["ragDescription"] + " Also for anything else."
    elif kind == 3:
        tool["aliases"] = [f"alias.{i}"] if not tool["aliases"] else []
    elif kind == 4:
        tool["module"] = rng.choice(MODULES)
    elif kind == 5 and tool["mutating"]:
        tool.update(mutating=False, policyClass="read", hitlTier=None, retryClass="transient", idempotency="natural")
    else:
        tool.update(mutate_tool(tool["id"], module=tool["module"], policyDomain=tool["policyDomain"], hitlTier="high"))
    return tool


@pytest.mark.parametrize("seed", [1, 2])
def test_every_reader_serves_a_generated_catalog_alike(seed: int, make_user: Any) -> None:
    rng = random.Random(seed)
    condor = [_condor_tool(rng, i) for i in range(120)]
    tucan = [tucan_tool(f"tucan-{i}", rng.choice(CATEGORIES), mutating=rng.random() < 0.4) for i in range(40)]
    intake = {"id": "intake", "trigger": "multi-entity-intake", "tools": ["tool0", "tool1"]}
    catalog_import(raw=encode(condor_manifest(condor, baselineCount=120, forcedFloors=[intake])), via="test")
    sign_off("condor")
    catalog_import(raw=encode(tucan_manifest(tucan)), via="test")
    sign_off("tucan")

    changed = [
        _changed(rng, t, i) if rng.random() < 0.4 else t for i, t in enumerate(condor) if i < 2 or rng.random() > 0.05
    ]
    changed += [_condor_tool(rng, 1000 + i) for i in range(10)]  # new: never signed off
    narrowed = {**intake, "tools": ["tool1"]}  # tool0 dropped from the floor: it keeps being forced until sign-off
    catalog_import(raw=encode(condor_manifest(changed, baselineCount=120, forcedFloors=[narrowed])), via="test")
    for t in tucan:
        if rng.random() < 0.3:
            t["category"] = rng.choice(CATEGORIES)
    catalog_import(raw=encode(tucan_manifest(tucan)), via="test")
    assert Tool.objects.live().filter(awaiting_signoff=True).count() > 20

    officer = make_user("olga", "safety-officer")
    tier_floor_add(policy_domain="lab", pattern="", system="", min_tier="high", reason="lab orders", created_by=officer)
    medication = TierFloor.objects.get(policy_domain="medication")
    tier_floor_remove(floor_id=medication.pk, reason="covered elsewhere", removed_by=officer)

    assert disagreements() == []
    sign_off("condor")
    sign_off("tucan")
    assert disagreements() == []
