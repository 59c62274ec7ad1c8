"""A safety officer's day, in a real browser: filter findings, sign off a revision, waive a finding."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.models import CatalogRevision, Waiver
from tests.integration.browser.conftest import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo_loaded(demo_committed: None) -> None:
    pass


def test_findings_filter_updates_the_groups_and_the_url(
    live_server: Any, demo_loaded: None, page: Any, screenshot: Any
) -> None:
    sign_in(page, live_server.url, "safety", then="/findings/")
    assert page.locator("#results section.finding-group").count() > 5  # one per rule
    screenshot("findings")
    page.select_option("select[name=rule]", "uuid-output-instruction")
    page.wait_for_url("**rule=uuid-output-instruction**")
    page.locator("#results section.finding-group").first.wait_for()
    page.wait_for_function("document.querySelectorAll('#results section.finding-group').length === 1")
    group = page.locator("#results section.finding-group")
    assert "4 findings" in group.inner_text()
    assert "listPendingLabOrders" in group.inner_text()  # the one group opens by itself
    screenshot("findings-filtered")


def test_officer_signs_off_the_condor_revision(live_server: Any, demo_loaded: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "safety")
    page.goto(live_server.url + "/revisions/")
    page.click("text=condor r2")
    assert page.locator("article.change.weakening").count() == 2  # the waiting changes highlighted
    page.fill("#id_comment", "Reviewed the tier drop and the rewritten note description.")
    screenshot("revision-sign-off")
    page.click("button[value=approved]")
    page.wait_for_load_state()
    assert "Reviewed the tier drop" in page.content()
    # A weakening change to tier-high signDocument: one safety officer's approval is not enough.
    assert "1 of 2 sign-offs" in page.locator("section[aria-labelledby=signoff-h]").inner_text()
    assert CatalogRevision.objects.get(system="condor", number=2).review_state == "pending-review"
    screenshot("revision-approved")


def test_officer_waives_a_finding(live_server: Any, demo_loaded: None, page: Any, screenshot: Any) -> None:
    sign_in(page, live_server.url, "safety")
    page.goto(live_server.url + "/tools/condor/recordPayment/")
    page.select_option("#id_rule", "retry-declared-on-mutating")
    page.fill("#id_justification", "Billing gateway dedupes by payment id until the descriptor fix ships.")
    page.click("text=Grant waiver")
    page.wait_for_load_state()
    assert page.locator("text=waived by safety until").count() == 1
    assert Waiver.objects.get().rule == "retry-declared-on-mutating"
    screenshot("tool-waived")


def test_other_roles_do_not_see_the_forms(live_server: Any, demo_loaded: None, page: Any) -> None:
    sign_in(page, live_server.url, "oncall")
    page.goto(live_server.url + "/revisions/condor/1/")
    assert page.locator("text=Sign off this revision").count() == 0
    page.goto(live_server.url + "/tools/condor/recordPayment/")
    assert page.locator("text=Grant waiver").count() == 0
