"""The safety officer's pages, as each persona sees them: officer, other roles, the importer."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone, translation

from catalog.models import CatalogRevision, Finding, Waiver
from catalog.services.imports import catalog_import
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(manifests: Any) -> CatalogRevision:
    tools = [
        manifests.mutate_tool("prescribeMedication"),
        manifests.condor_tool("listActiveMedications", ragKeywords={"en": ["active medications"]}),
        manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none"),
    ]
    return catalog_import(raw=manifests.encode(manifests.condor(tools, baselineCount=3)), via="test").revision


def test_pages_need_a_signed_in_user(client: Client, catalog: CatalogRevision) -> None:
    for url in ("/findings/", "/revisions/", "/revisions/condor/1/", "/tools/condor/stopMedication/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_findings_page_lists_and_filters(
    make_user: Any, catalog: CatalogRevision, django_assert_max_num_queries: Any
) -> None:
    client = signed_in(make_user, "oscar", "on-call")
    with django_assert_max_num_queries(10):
        page = client.get("/findings/")
    body = page.content.decode()
    assert "mutate-without-hitl" in body and "stopMedication" in body and "rag-keywords-languages" in body
    filtered = client.get("/findings/", {"rule": "rag-keywords-languages"}).content.decode()
    assert "listActiveMedications" in filtered and "stopMedication" not in filtered.split('id="results"')[1]


def test_findings_filter_answers_a_partial_to_htmx(make_user: Any, catalog: CatalogRevision) -> None:
    client = signed_in(make_user, "oscar", "on-call")
    response = client.get("/findings/", {"severity": "error"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="results">') and "<html" not in body
    assert "mutate-without-hitl" in body and "policy-class-fallback" not in body


def test_findings_query_count_does_not_grow_with_the_catalog(
    manifests: Any, make_user: Any, django_assert_max_num_queries: Any
) -> None:
    tools = [manifests.condor_tool(f"listThing{i}", ragKeywords={"en": ["x"]}) for i in range(120)]
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[])), via="test")
    assert Finding.objects.count() >= 120
    client = signed_in(make_user, "oscar", "on-call")
    with django_assert_max_num_queries(10):
        assert client.get("/findings/").status_code == 200


def test_revision_page_shows_the_sign_off_form_to_officers_only(make_user: Any, catalog: CatalogRevision) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    other = signed_in(make_user, "oscar", "on-call")
    assert "Sign off this revision" in officer.get("/revisions/condor/1/").content.decode()
    page = other.get("/revisions/condor/1/").content.decode()
    assert "Sign off this revision" not in page and "prescribeMedication" in page
    refused = other.post("/revisions/condor/1/review", {"decision": "approved", "comment": "sure"})
    assert refused.status_code == 403
    assert CatalogRevision.objects.get(pk=catalog.pk).review_state == "pending-review"


def test_officer_signs_off_a_revision(make_user: Any, catalog: CatalogRevision) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    response = officer.post("/revisions/condor/1/review", {"decision": "approved", "comment": "Tiers checked."})
    assert response.status_code == 302
    # A new tier-high tool (prescribeMedication) needs a second safety officer's sign-off.
    page = officer.get("/revisions/condor/1/").content.decode()
    assert "Tiers checked." in page and "1 of 2 sign-offs" in page
    assert CatalogRevision.objects.get(pk=catalog.pk).review_state == "pending-review"
    second = signed_in(make_user, "otto", "safety-officer")
    second.post("/revisions/condor/1/review", {"decision": "approved", "comment": "Agreed."})
    page = officer.get("/revisions/condor/1/").content.decode()
    assert "Agreed." in page and "Sign off this revision" not in page
    assert CatalogRevision.objects.get(pk=catalog.pk).review_state == "approved"


def test_review_without_comment_is_refused_beside_the_field(make_user: Any, catalog: CatalogRevision) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    response = officer.post("/revisions/condor/1/review", {"decision": "approved", "comment": ""})
    assert response.status_code == 400  # the page itself, not a redirect with a message on top
    page = response.content.decode()
    field = field_html(page, "id_comment")
    assert 'aria-invalid="true"' in field and "autofocus" in field and "id_comment_error" in field
    assert '<ul class="errorlist" id="id_comment_error"><li>This field is required.</li></ul>' in page
    assert "comment:" not in page
    assert CatalogRevision.objects.get(pk=catalog.pk).review_state == "pending-review"


def field_html(page: str, field_id: str) -> str:
    """The opening tag of the control with this id."""
    start = page.index(f'id="{field_id}"')
    return page[page.rindex("<", 0, start) : page.index(">", start) + 1]


def test_unknown_revision_is_a_404(make_user: Any, catalog: CatalogRevision) -> None:
    assert signed_in(make_user, "olga", "safety-officer").get("/revisions/condor/7/").status_code == 404


def test_officer_waives_a_rule_and_the_finding_shows_it(make_user: Any, catalog: CatalogRevision) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    url = "/tools/condor/stopMedication/"
    page = officer.get(url).content.decode()
    assert "Grant waiver" in page
    assert '<option value="mutate-without-hitl"' not in page  # never offered
    expires = (timezone.localdate() + timedelta(days=30)).isoformat()
    response = officer.post(
        "/tools/condor/stopMedication/waivers",
        {"rule": "policy-class-fallback", "justification": "Fix ships next sprint.", "expires_on": expires},
    )
    assert response.status_code == 302
    assert "waived by olga until" in officer.get(url).content.decode()
    assert Waiver.objects.get().granted_by.username == "olga"


def test_waiving_an_unwaivable_rule_is_refused_with_a_reason(make_user: Any, catalog: CatalogRevision) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    expires = (timezone.localdate() + timedelta(days=30)).isoformat()
    response = officer.post(
        "/tools/condor/stopMedication/waivers",
        {"rule": "mutate-without-hitl", "justification": "please", "expires_on": expires},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert (
        '<ul class="errorlist" id="id_rule_error"><li>mutate-without-hitl can never be waived; '
        "fix the declaration instead</li></ul>" in page
    )
    assert "please</textarea>" in page  # what the officer wrote is still there
    assert Waiver.objects.count() == 0


def test_other_roles_see_no_waiver_form_and_are_refused(make_user: Any, catalog: CatalogRevision) -> None:
    client = signed_in(make_user, "tanja", "translator")
    assert "Grant waiver" not in client.get("/tools/condor/stopMedication/").content.decode()
    expires = (timezone.localdate() + timedelta(days=30)).isoformat()
    response = client.post(
        "/tools/condor/stopMedication/waivers",
        {"rule": "policy-class-fallback", "justification": "x", "expires_on": expires},
    )
    assert response.status_code == 403 and Waiver.objects.count() == 0


def test_a_refused_waiver_keeps_what_was_typed_and_says_why_beside_the_field(
    make_user: Any, catalog: CatalogRevision
) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    too_far = (timezone.localdate() + timedelta(days=200)).isoformat()
    data = {"rule": "policy-class-fallback", "justification": "Vendor fix in Q3.", "expires_on": too_far}
    response = officer.post("/tools/condor/stopMedication/waivers", data)
    assert response.status_code == 400
    page = response.content.decode()
    assert '<ul class="errorlist" id="id_expires_on_error"><li>at most 180 days ahead</li></ul>' in page
    expires = field_html(page, "id_expires_on")
    assert f'value="{too_far}"' in expires and "autofocus" in expires and 'aria-invalid="true"' in expires
    assert "id_expires_on_error" in expires
    assert "Vendor fix in Q3.</textarea>" in page
    assert '<option value="policy-class-fallback" selected>' in page
    assert "expires_at" not in page and Waiver.objects.count() == 0


def test_a_refused_waiver_speaks_the_officers_language(make_user: Any, catalog: CatalogRevision) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    too_far = (timezone.localdate() + timedelta(days=200)).isoformat()
    response = officer.post(
        "/tools/condor/stopMedication/waivers",
        {"rule": "policy-class-fallback", "justification": "", "expires_on": too_far},
        headers={"Accept-Language": "de"},
    )
    translation.activate(settings.LANGUAGE_CODE)  # the request left German active in this thread
    page = response.content.decode()
    assert response.status_code == 400 and "Dieses Feld ist zwingend erforderlich." in page
    assert "Ausnahme" in page and "This field is required." not in page


def test_a_refused_sign_off_keeps_the_comment_and_says_why_above_the_buttons(
    make_user: Any, manifests: Any, catalog: CatalogRevision
) -> None:
    tools = [manifests.mutate_tool("prescribeMedication", hitlTier="low")]
    catalog_import(raw=manifests.encode(manifests.condor(tools, baselineCount=1, forcedFloors=[])), via="test")
    officer = signed_in(make_user, "olga", "safety-officer")
    response = officer.post("/revisions/condor/1/review", {"decision": "approved", "comment": "Looked at r1 only."})
    assert response.status_code == 409
    page = response.content.decode()
    assert "condor r2 is newer and also waits for sign-off" in page.split('id="decision-form"')[1]
    assert "Looked at r1 only.</textarea>" in page
    assert CatalogRevision.objects.get(pk=catalog.pk).review_state == "pending-review"


def test_a_filter_value_that_does_not_validate_is_shown_beside_its_field(
    make_user: Any, catalog: CatalogRevision
) -> None:
    client = signed_in(make_user, "oscar", "on-call")
    response = client.get("/findings/", {"severity": "fatal"})
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="id_severity_error"' in page and "fatal is not one of the available choices" in page
    assert 'aria-invalid="true"' in field_html(page, "id_severity") and "mutate-without-hitl" in page


def test_the_tool_page_links_the_owners_on_call_and_channel(
    make_user: Any, catalog: CatalogRevision, settings: Any
) -> None:
    settings.CONDOR_CHAT_URL = "https://chat.example.org/{name}"
    page = signed_in(make_user, "oscar", "on-call").get("/tools/condor/stopMedication/").content.decode()
    assert '<a class="contact" href="https://chat.example.org/meds-oncall">@meds-oncall</a>' in page
    assert '<a class="contact" href="https://chat.example.org/meds">#meds</a>' in page
