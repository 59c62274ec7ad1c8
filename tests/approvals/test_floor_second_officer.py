"""A tier floor is weakened only by two safety officers (issue 40's row: one officer removed the floor that held a
signed-off, declared-low tool at high, and the runtime was served low at once). Through the runtime's API: nothing
changes for a call before the second officer confirms; on PostgreSQL, a confirmation racing a withdrawal, or
another confirmation, applies the proposal at most once and never after it was withdrawn."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from catalog.core.audit import audit_verify
from catalog.models import AuditEvent, TierFloor
from catalog.services.floors import FloorRefused, tier_floor_add, tier_floor_confirm, tier_floor_keep, tier_floor_remove
from tests.approvals.conftest import Runtime, condor_catalog, condor_tools
from tests.concurrency import at_once
from tests.conftest import requires_postgres, signed_import

_calls = itertools.count(1)


def _call(runtime: Runtime, profile: str = "clinical-production") -> Any:
    return runtime.evaluate(tool="releaseOrder", profile=profile, dispatchMode="operator", args={"n": next(_calls)})


def _catalog_with_a_floored_low_tool(manifests: Any, officer: Any) -> TierFloor:
    """releaseOrder, signed off at tier low, held at high by an officer's floor."""
    tools = [
        *condor_tools(manifests),
        manifests.mutate_tool("releaseOrder", module="orders", policyDomain="orders", hitlTier="low"),
    ]
    signed_import(condor_catalog(manifests, tools))
    return tier_floor_add(
        policy_domain="", pattern="*release*order*", system="", min_tier="high", reason="orders", created_by=officer
    )


@pytest.mark.django_db
def test_one_officer_cannot_lower_what_a_clinical_runtime_is_served(
    runtime: Runtime, manifests: Any, make_user: Any, make_token: Any, client: Client
) -> None:
    olga, sam = make_user("olga", "safety-officer"), make_user("sam", "safety-officer")
    floor = _catalog_with_a_floored_low_tool(manifests, olga)
    reader = {"Authorization": f"Bearer {make_token('reader', scopes=('catalog:read',))}"}

    def served_tier() -> str:
        url = "/api/v1/catalog/tools/condor/releaseOrder/policy"
        return client.get(url, {"profile": "clinical-production"}, headers=reader).json()["hitlTier"]

    assert _call(runtime).json()["reason"] == "tier-high" and served_tier() == "high"
    tier_floor_remove(floor_id=floor.pk, reason="orders are gated elsewhere", removed_by=olga)
    for profile in ("clinical-production", "demo"):  # a floor holds for every profile
        held = _call(runtime, profile)
        assert held.status_code == 201 and held.json()["reason"] == "tier-high", (profile, held.content)
    assert served_tier() == "high"

    tier_floor_confirm(floor_id=floor.pk, confirmed_by=sam)
    allowed = _call(runtime)
    assert allowed.status_code == 200 and allowed.json()["decision"] == "allow", allowed.content
    assert served_tier() == "low"


@requires_postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("rival", ["keep", "confirm"])
def test_a_confirmation_racing_a_withdrawal_or_another_confirmation_applies_once_at_most(
    manifests: Any, make_user: Any, rival: str
) -> None:
    assert connection.vendor == "postgresql"
    officers = [make_user(f"officer{i}", "safety-officer") for i in range(6)]
    floor = _catalog_with_a_floored_low_tool(manifests, officers[0])
    for _ in range(5):
        tier_floor_remove(floor_id=floor.pk, reason="orders are gated elsewhere", removed_by=officers[0])

        def decide(i: int) -> Any:
            officer = officers[1 + i]
            if i % 2 and rival == "keep":
                return tier_floor_keep(floor_id=floor.pk, kept_by=officer)
            return tier_floor_confirm(floor_id=floor.pk, confirmed_by=officer)

        results = at_once(decide, 4)
        done = [r for r in results if not isinstance(r, FloorRefused)]
        refused = [r for r in results if isinstance(r, FloorRefused)]
        assert len(done) == 1 and len(refused) == 3, results
        assert all(not isinstance(r, Exception) or isinstance(r, FloorRefused) for r in results), results
        removed = not TierFloor.objects.filter(pk=floor.pk).exists()
        assert removed == isinstance(done[0], tuple)  # removed exactly when a confirmation won
        if removed:
            assert AuditEvent.objects.filter(action="catalog.tier_floor.removed").count() == 1
            break
        assert TierFloor.objects.get(pk=floor.pk).proposal == ""  # kept: nothing left to confirm
    assert audit_verify().ok
