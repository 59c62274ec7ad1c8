"""Reviewing a revision like a pull request, as each persona sees it: the importer, two safety officers, another
role. A signed-off catalog, then a revision that lowers a tier-high tool to low and rewrites a mutating tool's
description (it needs two sign-offs)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from catalog.models import CatalogRevision, Tool
from catalog.services.imports import catalog_import
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import

pytestmark = pytest.mark.django_db

OLD_TEXT = (
    "USE WHEN: the clinician asks to book a follow-up appointment for the patient.\n"
    "DO NOT USE WHEN: the visit is already booked.\nREQUIRES: a date.\nPRODUCES: a booked appointment."
)
NEW_TEXT = OLD_TEXT.replace("a follow-up appointment", "any appointment or procedure")


def catalog_tools(tier: str = "high", text: str = OLD_TEXT) -> list[dict[str, Any]]:
    return [
        mutate_tool("prescribeMedication", hitlTier=tier),
        mutate_tool("bookAppointment", module="appointment", policyDomain="appointment", ragDescription=text),
        condor_tool("listActiveMedications"),
    ]


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def users(make_user: Any) -> dict[str, Any]:
    return {
        "importer": make_user("ingrid", "catalog-admin"),
        "officer": make_user("olga", "safety-officer"),
        "second": make_user("otto", "safety-officer"),
        "oncall": make_user("oscar", "on-call"),
    }


@pytest.fixture
def people(users: dict[str, Any]) -> dict[str, Client]:
    return {name: client_for(user) for name, user in users.items()}


@pytest.fixture
def pending(users: dict[str, Any]) -> CatalogRevision:
    signed_import(encode(condor_manifest(catalog_tools())))
    raw = encode(condor_manifest(catalog_tools(tier="low", text=NEW_TEXT)))
    result = catalog_import(raw=raw, via="test", imported_by=users["importer"])
    assert result.revision is not None and result.revision.number == 2
    return result.revision


def body(client: Client, url: str = "/revisions/condor/2/", **headers: str) -> str:
    response = client.get(url, headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def post(client: Client, decision: str, comment: str = "Checked the tier and the text.", number: int = 2) -> Any:
    return client.post(f"/revisions/condor/{number}/review", {"decision": decision, "comment": comment}, follow=True)


def test_the_page_shows_badges_word_diffs_findings_and_what_signoff_would_change(
    people: dict[str, Client], pending: CatalogRevision
) -> None:
    page = body(people["officer"])
    assert page.count('class="badge weakening"') >= 4  # two fields, in the changes and in the preview
    assert "<del>high</del>" in page and "<ins>low</ins>" in page
    assert "<del>a follow-up</del><ins>any</ins>" in page and "<ins> or procedure</ins>" in page
    assert "DO NOT USE WHEN: the visit is already booked." in page  # the whole text, unchanged lines too
    assert "hitl-tier-below-floor" in page and 'href="/tools/condor/prescribeMedication/#findings-h"' in page
    assert "what sign-off would change" in page
    assert "needs two sign-offs" in page and "0 of 2 sign-offs" in page
    # The decision comes after the diff and the preview.
    assert page.index("<del>a follow-up</del>") < page.index("effect-h") < page.index('class="card decision"')
    assert 'value="approved"' in page and 'value="changes-requested"' in page


def test_the_preview_says_what_a_clinical_runtime_is_served_with_the_floors_applied(
    people: dict[str, Client], pending: CatalogRevision, users: dict[str, Any]
) -> None:
    # prescribeMedication is declared high → low, but the medication floors keep serving it high: sign-off changes
    # the declaration, not what a clinical runtime gets. The officer must see that, not "high → low".
    card = body(people["officer"]).split('href="/tools/condor/prescribeMedication/"')[-1].split("</article>")[0]
    assert 'data-served-tier="high→high"' in card and "before and after sign-off" in card
    assert "held by domain:medication, pattern:*prescri*" in card
    # A tool no floor holds: the served tier drops with the sign-off, and the line says so.
    tools = [
        *catalog_tools(tier="low", text=NEW_TEXT),
        mutate_tool("closeEpisode", module="episode", policyDomain="episode"),
    ]
    signed_import(encode(condor_manifest(tools)))
    tools[-1]["hitlTier"] = "low"
    catalog_import(raw=encode(condor_manifest(tools)), via="test", imported_by=users["importer"])
    card = body(people["officer"], "/revisions/condor/4/").split('href="/tools/condor/closeEpisode/"')[-1]
    card = card.split("</article>")[0]
    assert 'data-served-tier="high→low"' in card and "<del>high</del> → <ins>low</ins>" in card


def test_a_decided_revision_no_longer_says_tools_are_left_awaiting(
    people: dict[str, Client], pending: CatalogRevision
) -> None:
    assert "2 tools left awaiting sign-off" in body(people["officer"])
    post(people["officer"], "approved")
    post(people["second"], "approved")
    page = body(people["officer"])
    assert "left awaiting sign-off" not in page and "2 tools with a weakening change" in page


def test_the_importer_sees_why_they_cannot_sign_off(people: dict[str, Client], pending: CatalogRevision) -> None:
    page = body(people["importer"])
    assert "an importer cannot sign off their own import" in page
    assert "Sign off this revision" not in page and 'value="approved"' not in page


def test_a_safety_officer_who_imported_is_refused_and_sees_the_services_reason(
    make_user: Any, people: dict[str, Client], pending: CatalogRevision
) -> None:
    owner = make_user("sofia", "safety-officer")
    raw = encode(condor_manifest(catalog_tools(tier="low", text=NEW_TEXT + " Also for referrals.")))
    catalog_import(raw=raw, via="api token ci", imported_by=owner)
    sofia = client_for(owner)
    assert "an importer cannot sign off their own import" in body(sofia, "/revisions/condor/3/")
    refused = sofia.post("/revisions/condor/3/review", {"decision": "approved", "comment": "mine"})
    assert refused.status_code == 403
    assert "another safety officer must sign it off" in refused.content.decode()
    assert CatalogRevision.objects.get(system="condor", number=3).review_state == "pending-review"


def test_two_officers_sign_off_one_after_the_other(people: dict[str, Client], pending: CatalogRevision) -> None:
    first = post(people["officer"], "approved").content.decode()
    assert "1 of 2 sign-offs" in first and "(olga)" in first
    assert "waits for 1 more safety officer" in first
    assert "You approved this revision already" in first and 'value="approved"' not in first
    assert 'value="changes-requested"' in first  # still open to olga
    assert CatalogRevision.objects.get(pk=pending.pk).review_state == "pending-review"
    assert Tool.objects.get(declared_id="prescribeMedication").awaiting_signoff

    second = post(people["second"], "approved", "Second pair of eyes: fine.").content.decode()
    assert "is approved" in second and "2 of 2 sign-offs" in second and "(olga, otto)" in second
    assert "Sign off this revision" not in second and "Second pair of eyes: fine." in second
    assert CatalogRevision.objects.get(pk=pending.pk).review_state == "approved"
    assert "awaiting sign-off" not in body(people["officer"], "/tools/condor/prescribeMedication/")


def test_approving_twice_directly_is_refused_with_the_reason(
    people: dict[str, Client], pending: CatalogRevision
) -> None:
    post(people["officer"], "approved")
    again = people["officer"].post("/revisions/condor/2/review", {"decision": "approved", "comment": "again"})
    assert again.status_code == 403 and "a second safety officer must approve it too" in again.content.decode()


def test_a_request_for_changes_keeps_what_is_in_effect_and_resets_the_count(
    people: dict[str, Client], pending: CatalogRevision
) -> None:
    post(people["officer"], "approved")
    page = post(people["second"], "changes-requested", "The tier must stay high.").content.decode()
    assert "what is in effect stays as it is" in page
    assert "0 of 2 sign-offs" in page and "no longer counts" in page
    assert Tool.objects.get(declared_id="prescribeMedication").in_effect["hitl_tier"] == "high"
    assert 'value="approved"' in body(people["officer"])  # olga's earlier approval no longer counts


def test_an_older_revision_points_to_the_newer_and_a_refused_approval_shows_why(
    people: dict[str, Client], pending: CatalogRevision
) -> None:
    raw = encode(condor_manifest(catalog_tools(tier="low", text=NEW_TEXT + " Also for referrals.")))
    catalog_import(raw=raw, via="test")
    page = body(people["officer"])
    assert "is newer and also waits for sign-off" in page and 'href="/revisions/condor/3/"' in page
    assert 'value="approved"' not in page and 'value="changes-requested"' in page
    refused = post(people["officer"], "approved").content.decode()  # the page hid the button; the service says why
    assert "condor r3 is newer and also waits for sign-off" in refused
    post(people["officer"], "approved", number=3)
    post(people["second"], "approved", number=3)
    superseded = body(people["officer"])
    assert "Superseded by" in superseded and 'href="/revisions/condor/3/"' in superseded
    assert "Sign off this revision" not in superseded


def test_other_roles_read_the_page_without_a_form(people: dict[str, Client], pending: CatalogRevision) -> None:
    page = body(people["oncall"])
    assert "<del>high</del>" in page and "Only a safety officer can sign off a revision." in page
    assert "Sign off this revision" not in page
    assert post(people["oncall"], "approved").status_code == 403


def test_the_list_shows_state_signoff_progress_and_weakening_count(
    people: dict[str, Client], pending: CatalogRevision, django_assert_max_num_queries: Any
) -> None:
    post(people["officer"], "approved")
    for i in range(12):  # more revisions: the list's queries stay the same
        catalog_import(raw=encode(condor_manifest(catalog_tools(tier="low", text=NEW_TEXT + f" v{i}"))), via="t")
    # and since which sign-off each system is served (three queries) with the clinical profiles' exports (one)
    with django_assert_max_num_queries(12):
        page = body(people["oncall"], "/revisions/")
    assert "condor r2" in page and "1 of 2 sign-offs" in page
    assert '<span class="badge weakening">2</span>' in page  # r2 left two tools awaiting sign-off
    assert "2 of 2 sign-offs" in page  # r1, signed off by two officers


def test_the_page_stays_at_a_bounded_number_of_queries(
    people: dict[str, Client], django_assert_max_num_queries: Any
) -> None:
    many = [mutate_tool(f"recordThing{i}") for i in range(40)]
    signed_import(encode(condor_manifest(many, forcedFloors=[])))
    for tool in many:
        tool.update(hitlTier="low", ragDescription=tool["ragDescription"] + " Drafts too.")
    catalog_import(raw=encode(condor_manifest(many, forcedFloors=[])), via="test")
    # A fixed number, whatever the count of tools (the header's included, and the tier floors the served tiers read).
    with django_assert_max_num_queries(18):
        page = body(people["officer"])
    assert page.count('class="card change weakening"') == 40 and page.count('class="card awaiting"') == 40


def test_the_page_speaks_german(people: dict[str, Client], pending: CatalogRevision) -> None:
    page = body(people["officer"], **{"Accept-Language": "de"})
    translation.activate(settings.LANGUAGE_CODE)  # the request left German active in this thread
    assert "abschwächend" in page and "Freigeben" in page and "0 von 2 Freigaben" in page
