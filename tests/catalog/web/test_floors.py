"""The tier floors page, as each persona sees it: the safety officer keeps the table, everyone else reads it."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils import translation

from catalog.models import AuditEvent, Finding, TierFloor
from catalog.services.imports import catalog_import
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(manifests: Any) -> None:
    tools = [
        manifests.mutate_tool("orderLabTest", module="lab", policyDomain="lab", hitlTier="low"),
        manifests.mutate_tool("prescribeMedication"),
        manifests.condor_tool("listLabResults", module="lab", policyDomain="lab"),
    ]
    catalog_import(raw=manifests.encode(manifests.condor(tools, baselineCount=3, forcedFloors=[])), via="test")


@pytest.fixture
def officer(make_user: Any) -> Client:
    return signed_in(make_user, "olga", "safety-officer")


NEW_FLOOR = {"policy_domain": "lab", "pattern": "", "system": "", "min_tier": "high", "reason": "orders reach patients"}


def test_the_page_needs_a_signed_in_user(client: Client) -> None:
    response = client.get("/floors/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_an_officer_sees_the_floors_the_tools_they_catch_and_the_forms(
    officer: Client, catalog: None, django_assert_max_num_queries: Any
) -> None:
    # 12: the header now shows a safety officer the pending approvals (per tier, and in all domains).
    with django_assert_max_num_queries(12):
        response = officer.get("/floors/")
    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-floor="pattern:*prescri*"' in body and 'data-floor="domain:medication"' in body
    assert "catches 1 mutating tool" in body  # prescribeMedication, by domain and by pattern
    assert "New floor" in body and "Change tier or reason…" in body and "Remove…" in body
    assert 'href="/floors/"' in body  # the nav link, for safety officers


def test_others_read_the_page_without_any_form_or_nav_link(oncall: Client, catalog: None) -> None:
    body = oncall.get("/floors/").content.decode()
    assert "data-read-only" in body and 'data-floor="domain:medication"' in body
    assert "New floor" not in body and "Remove…" not in body and '<form method="post" action="/floors' not in body
    assert 'href="/floors/"' not in body


def test_others_are_refused_every_write(oncall: Client, catalog: None) -> None:
    floor = TierFloor.objects.get(policy_domain="medication")
    assert oncall.post("/floors/new", NEW_FLOOR).status_code == 403
    assert oncall.post(f"/floors/{floor.pk}/change", {"min_tier": "low", "reason": "x"}).status_code == 403
    assert oncall.post(f"/floors/{floor.pk}/remove", {"reason": "x"}).status_code == 403
    assert TierFloor.objects.get(pk=floor.pk).min_tier == "high"
    assert not TierFloor.objects.filter(policy_domain="lab").exists()


def test_an_officer_adds_a_floor_and_sees_what_it_catches(officer: Client, catalog: None) -> None:
    response = officer.post("/floors/new", NEW_FLOOR)
    floor = TierFloor.objects.get(policy_domain="lab")
    assert response.status_code == 302 and response["Location"] == f"/floors/?floor={floor.pk}#caught"
    page = officer.get(response["Location"]).content.decode()
    assert "Tier floor domain:lab added." in page
    caught = page.split('id="caught"')[1].split("</section>")[0]
    assert 'data-tool="condor:orderLabTest"' in caught and "below the floor" in caught
    assert "listLabResults" not in caught  # read tools are never held to a floor
    assert Finding.objects.filter(rule="hitl-tier-below-floor", tool__declared_id="orderLabTest").exists()


def test_a_refused_floor_shows_each_problem_beside_its_field_and_keeps_the_input(
    officer: Client, catalog: None
) -> None:
    response = officer.post("/floors/new", {**NEW_FLOOR, "pattern": "*lab*", "reason": ""})
    body = response.content.decode()
    assert response.status_code == 400
    assert "not both: clear one" in body and "This field is required." in body
    assert 'value="*lab*"' in body and 'value="lab"' in body
    assert not TierFloor.objects.filter(policy_domain="lab").exists()


def test_a_duplicate_floor_is_refused_beside_its_field(officer: Client, catalog: None) -> None:
    response = officer.post("/floors/new", {**NEW_FLOOR, "policy_domain": "Medication"})
    assert response.status_code == 400
    assert "the floor domain:medication exists already: change its tier instead" in response.content.decode()


@pytest.fixture
def second(make_user: Any) -> Client:
    return signed_in(make_user, "sam", "safety-officer")


def test_lowering_a_floor_is_proposed_by_one_officer_and_confirmed_by_another(
    officer: Client, second: Client, catalog: None
) -> None:
    officer.post("/floors/new", NEW_FLOOR)
    floor = TierFloor.objects.get(policy_domain="lab")
    response = officer.post(f"/floors/{floor.pk}/change", {"min_tier": "low", "reason": "the lab team gates orders"})
    assert response.status_code == 302
    floor.refresh_from_db()
    assert (floor.min_tier, floor.proposal, floor.proposed_tier) == ("high", "lower", "low")
    assert Finding.objects.filter(rule="hitl-tier-below-floor").exists()  # the floor holds
    page = officer.get(response["Location"]).content.decode()
    assert "Lowering domain:lab to low proposed: it holds until a second safety officer confirms it." in page
    card = page.split(f'id="floor-{floor.pk}"')[1].split("</li>")[0]
    assert "data-own-proposal" in card and f"/floors/{floor.pk}/confirm" not in card  # not for the proposer
    # The proposer cannot confirm by posting either.
    officer.post(f"/floors/{floor.pk}/confirm")
    assert TierFloor.objects.get(pk=floor.pk).min_tier == "high"
    card = second.get("/floors/").content.decode().split(f'id="floor-{floor.pk}"')[1].split("</li>")[0]
    assert "lowering to low proposed" in card and "the lab team gates orders" in card
    confirmed = second.post(f"/floors/{floor.pk}/confirm", follow=True)
    assert "Tier floor domain:lab lowered: the gate applies it from the next call." in confirmed.content.decode()
    floor.refresh_from_db()
    assert (floor.min_tier, floor.reason, floor.proposal) == ("low", "the lab team gates orders", "")
    assert not Finding.objects.filter(rule="hitl-tier-below-floor").exists()


def test_a_removal_without_a_reason_comes_back_open_with_its_error(officer: Client, catalog: None) -> None:
    floor = TierFloor.objects.get(pattern="*prescri*")
    response = officer.post(f"/floors/{floor.pk}/remove", {"reason": ""})
    body = response.content.decode()
    assert response.status_code == 400
    card = body.split(f'id="floor-{floor.pk}"')[1].split("</li>")[0]
    assert '<details class="remove" open>' in card and "This field is required." in card
    assert TierFloor.objects.filter(pk=floor.pk).exists()


def test_a_removal_is_proposed_then_confirmed_or_kept(officer: Client, second: Client, catalog: None) -> None:
    floor = TierFloor.objects.get(pattern="*prescri*")
    response = officer.post(f"/floors/{floor.pk}/remove", {"reason": "covered by the medication floor"})
    assert response.status_code == 302 and response["Location"] == f"/floors/#floor-{floor.pk}"
    assert TierFloor.objects.get(pk=floor.pk).proposal == "remove"
    kept = second.post(f"/floors/{floor.pk}/keep", follow=True)
    assert "Tier floor pattern:*prescri* kept as it is." in kept.content.decode()
    assert TierFloor.objects.get(pk=floor.pk).proposal == ""
    officer.post(f"/floors/{floor.pk}/remove", {"reason": "covered by the medication floor"})
    confirmed = second.post(f"/floors/{floor.pk}/confirm", follow=True)
    assert "Tier floor pattern:*prescri* removed: the gate no longer applies it." in confirmed.content.decode()
    assert not TierFloor.objects.filter(pk=floor.pk).exists()
    assert AuditEvent.objects.get(action="catalog.tier_floor.removed").after == {
        "removal_reason": "covered by the medication floor",
        "proposed_by": "olga",
        "confirmed_by": "sam",
    }
    late = officer.post(f"/floors/{floor.pk}/confirm")  # a confirmation that arrives after the removal
    assert late.status_code == 404


def test_a_floor_removed_meanwhile_answers_404(officer: Client, catalog: None) -> None:
    assert officer.post("/floors/999999/change", {"min_tier": "low", "reason": "x"}).status_code == 404


def test_the_page_is_in_german(officer: Client, catalog: None) -> None:
    with translation.override("en"):  # the language middleware leaves German active after the request
        body = officer.get("/floors/", headers={"Accept-Language": "de"}).content.decode()
    assert "HITL-Mindeststufen" in body and "Neue Mindeststufe" in body
