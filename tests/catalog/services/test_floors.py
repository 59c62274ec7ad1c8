"""Safety officers keep the tier floors: each change audited in its transaction, the findings re-linted with it."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.models import AuditEvent, Finding, TierFloor
from catalog.services.floors import (
    FloorRefused,
    tier_floor_add,
    tier_floor_change,
    tier_floor_confirm,
    tier_floor_keep,
    tier_floor_remove,
)
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db
RULE = "hitl-tier-below-floor"


@pytest.fixture
def officer(make_user: Any) -> Any:
    return make_user("olga", "safety-officer")


@pytest.fixture
def second(make_user: Any) -> Any:
    return make_user("sam", "safety-officer")


@pytest.fixture
def catalog(manifests: Any) -> None:
    tools = [
        manifests.mutate_tool("orderLabTest", module="lab", policyDomain="lab", hitlTier="low"),
        manifests.mutate_tool("prescribeMedication"),
        manifests.condor_tool("listLabResults", module="lab", policyDomain="lab"),
    ]
    catalog_import(raw=manifests.encode(manifests.condor(tools, baselineCount=3, forcedFloors=[])), via="test")


def below_floor() -> list[tuple[str, str]]:
    return sorted(Finding.objects.filter(rule=RULE).values_list("tool__declared_id", "message"))


def add_lab_floor(by: Any, tier: str = "high") -> TierFloor:
    return tier_floor_add(
        policy_domain=" Lab ",
        pattern="",
        system="",
        min_tier=tier,
        reason="lab orders reach the patient",
        created_by=by,
    )


def test_an_officer_adds_a_floor_with_its_audit_event_and_the_findings_follow(officer: Any, catalog: None) -> None:
    assert below_floor() == []
    floor = add_lab_floor(officer)
    assert (floor.policy_domain, floor.min_tier, floor.created_by) == ("lab", "high", officer)  # normalized
    event = AuditEvent.objects.get(action="catalog.tier_floor.added")
    assert event.actor_user == officer and event.object_id == "domain:lab"
    assert event.after["min_tier"] == "high" and event.after["reason"] == "lab orders reach the patient"
    [(tool, message)] = below_floor()
    assert tool == "orderLabTest" and "domain:lab requires at least 'high'" in message


def test_lowering_the_tier_waits_for_a_second_officer_then_records_both(
    officer: Any, second: Any, catalog: None
) -> None:
    floor = add_lab_floor(officer)
    proposed = tier_floor_change(
        floor_id=floor.pk, min_tier="low", reason="low is enough for orders", changed_by=officer
    )
    assert (proposed.proposal, proposed.proposed_tier, proposed.min_tier) == ("lower", "low", "high")
    assert AuditEvent.objects.get(action="catalog.tier_floor.weakening_proposed").after["proposal"]["by"] == "olga"
    assert [t for t, _ in below_floor()] == ["orderLabTest"]  # the floor holds
    with pytest.raises(FloorRefused) as refused:
        tier_floor_confirm(floor_id=floor.pk, confirmed_by=officer)
    assert refused.value.forbidden and "a second safety officer" in refused.value.message
    assert tier_floor_confirm(floor_id=floor.pk, confirmed_by=second) == ("domain:lab", "lower")
    event = AuditEvent.objects.get(action="catalog.tier_floor.changed")
    assert (event.before["min_tier"], event.after["min_tier"]) == ("high", "low")
    assert (event.after["proposed_by"], event.after["confirmed_by"]) == ("olga", "sam")
    assert event.after["reason"] == "low is enough for orders"
    assert below_floor() == []
    floor.refresh_from_db()
    assert floor.updated_by == second and floor.updated_at > floor.created_at and floor.proposal == ""


def test_raising_the_tier_or_rewording_takes_effect_at_once(officer: Any, catalog: None) -> None:
    floor = add_lab_floor(officer, tier="low")
    raised = tier_floor_change(
        floor_id=floor.pk, min_tier="high", reason="orders reach the patient", changed_by=officer
    )
    assert (raised.min_tier, raised.reason, raised.proposal) == ("high", "orders reach the patient", "")
    assert [t for t, _ in below_floor()] == ["orderLabTest"]


def test_a_change_that_changes_nothing_writes_nothing(officer: Any, catalog: None) -> None:
    floor = add_lab_floor(officer)
    tier_floor_change(floor_id=floor.pk, min_tier="high", reason="lab orders reach the patient", changed_by=officer)
    assert not AuditEvent.objects.filter(action="catalog.tier_floor.changed").exists()


def test_removing_a_floor_needs_a_reason_and_a_second_officer(officer: Any, second: Any, catalog: None) -> None:
    floor = add_lab_floor(officer)
    with pytest.raises(FloorRefused) as refused:
        tier_floor_remove(floor_id=floor.pk, reason="  ", removed_by=officer)
    assert "write why" in refused.value.problems["reason"]
    proposed = tier_floor_remove(floor_id=floor.pk, reason="the lab team gates orders", removed_by=officer)
    assert proposed.proposal == "remove" and TierFloor.objects.filter(pk=floor.pk).exists()
    assert [t for t, _ in below_floor()] == ["orderLabTest"]
    with pytest.raises(FloorRefused) as twice:  # one proposal at a time, also from another officer
        tier_floor_change(floor_id=floor.pk, min_tier="low", reason="low", changed_by=second)
    assert "the removal olga proposed awaits a second safety officer" in twice.value.message
    assert tier_floor_confirm(floor_id=floor.pk, confirmed_by=second) == ("domain:lab", "remove")
    assert not TierFloor.objects.filter(pk=floor.pk).exists()
    event = AuditEvent.objects.get(action="catalog.tier_floor.removed")
    assert event.before["policy_domain"] == "lab"
    assert event.after == {"removal_reason": "the lab team gates orders", "proposed_by": "olga", "confirmed_by": "sam"}
    assert below_floor() == []


def test_any_officer_keeps_the_floor_and_nothing_is_left_to_confirm(officer: Any, second: Any, catalog: None) -> None:
    floor = add_lab_floor(officer)
    tier_floor_remove(floor_id=floor.pk, reason="the lab team gates orders", removed_by=officer)
    kept = tier_floor_keep(floor_id=floor.pk, kept_by=second)
    assert kept.proposal == "" and kept.proposed_by is None and kept.min_tier == "high"
    assert AuditEvent.objects.get(action="catalog.tier_floor.kept").before["proposal"]["what"] == "remove"
    with pytest.raises(FloorRefused) as refused:
        tier_floor_confirm(floor_id=floor.pk, confirmed_by=second)
    assert "nothing awaits confirmation" in refused.value.message
    assert TierFloor.objects.get(pk=floor.pk).min_tier == "high"


def test_only_a_safety_officer_may_touch_the_floors(make_user: Any, officer: Any, catalog: None) -> None:
    oncall = make_user("oscar", "on-call")
    with pytest.raises(FloorRefused) as refused:
        add_lab_floor(oncall)
    assert refused.value.forbidden and "only a safety officer" in refused.value.message
    floor = add_lab_floor(officer)
    for attempt in (
        lambda: tier_floor_change(floor_id=floor.pk, min_tier="low", reason="x", changed_by=oncall),
        lambda: tier_floor_remove(floor_id=floor.pk, reason="x", removed_by=oncall),
        lambda: tier_floor_confirm(floor_id=floor.pk, confirmed_by=oncall),
        lambda: tier_floor_keep(floor_id=floor.pk, kept_by=oncall),
    ):
        with pytest.raises(FloorRefused) as refused:
            attempt()
        assert refused.value.forbidden
    assert TierFloor.objects.get(pk=floor.pk).min_tier == "high"
    assert AuditEvent.objects.filter(action__startswith="catalog.tier_floor.").count() == 1


def test_a_floor_entered_twice_is_refused_with_what_to_do(officer: Any) -> None:
    add_lab_floor(officer)
    with pytest.raises(FloorRefused) as refused:
        add_lab_floor(officer, tier="low")
    assert refused.value.problems == {"policy_domain": "the floor domain:lab exists already: change its tier instead"}
    assert TierFloor.objects.filter(policy_domain="lab").count() == 1


def test_a_floor_for_one_system_is_another_floor_than_for_both(officer: Any) -> None:
    add_lab_floor(officer)
    floor = tier_floor_add(
        policy_domain="lab", pattern="", system="tucan", min_tier="low", reason="tucan's lab", created_by=officer
    )
    assert floor.key == "domain:lab@tucan"


def test_bad_input_is_refused_field_by_field_and_nothing_is_written(officer: Any) -> None:
    before = TierFloor.objects.count()
    with pytest.raises(FloorRefused) as refused:
        tier_floor_add(
            policy_domain="lab", pattern="*", system="mars", min_tier="medium", reason="", created_by=officer
        )
    assert set(refused.value.problems) == {"pattern", "system", "min_tier", "reason"}
    assert "not both" in refused.value.problems["pattern"]
    assert TierFloor.objects.count() == before
    assert not AuditEvent.objects.filter(action__startswith="catalog.tier_floor.").exists()


def test_a_pattern_floor_is_stored_in_lower_case_and_catches_by_any_spelling(officer: Any, manifests: Any) -> None:
    tools = [manifests.mutate_tool("order-lab-test", module="lab", policyDomain="lab", hitlTier="low")]
    catalog_import(raw=manifests.encode(manifests.condor(tools, baselineCount=1, forcedFloors=[])), via="test")
    floor = tier_floor_add(
        policy_domain="", pattern="*LAB.TEST*", system="", min_tier="high", reason="orders", created_by=officer
    )
    assert floor.pattern == "*lab.test*"  # matches the canonical key order.lab.test
    assert [t for t, _ in below_floor()] == ["order-lab-test"]


def test_the_seeded_floors_hold_a_catalog_at_import(manifests: Any) -> None:
    """The migration seeds the Condor seed's reservation: a medication write declared low is an error at once."""
    tools = [manifests.mutate_tool("stopMedication", hitlTier="low"), manifests.mutate_tool("prescribeMedication")]
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[])), via="test")
    [(tool, message)] = below_floor()
    assert tool == "stopMedication" and "domain:medication requires at least 'high'" in message
