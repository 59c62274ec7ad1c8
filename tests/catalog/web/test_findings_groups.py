"""The findings page grouped per rule, and the safety officer's bulk waiver of a selection: one justification, one
expiry, all waived or none."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from catalog.models import AuditEvent, Finding, Waiver
from catalog.services.governance import BULK_WAIVE_MAX
from catalog.services.imports import catalog_import
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db

SAME_MESSAGE = "ragKeywords have no de keyword"


@pytest.fixture
def catalog(manifests: Any) -> None:
    tools = [manifests.condor_tool(f"listThing{i}", ragKeywords={"en": ["x"]}) for i in range(3)]
    tools.append(manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none"))
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[])), via="test")


def group(page: str, rule: str) -> str:
    """The HTML of one rule's group on the page."""
    found = re.search(rf'aria-labelledby="group-(error|warning)-{re.escape(rule)}"', page)
    assert found, f"no group for {rule}"
    return page[found.start() : page.index("</section>", found.start())]


def ticked(rule: str, *tools: str) -> list[str]:
    found = Finding.objects.filter(rule=rule, tool__declared_id__in=tools)
    return [str(pk) for pk in found.values_list("pk", flat=True)]


def tag(page: str, element_id: str) -> str:
    """The opening tag of the element with this id."""
    start = page.index(f'id="{element_id}"')
    return page[page.rindex("<", 0, start) : page.index(">", start) + 1]


def in_days(days: int) -> str:
    return (timezone.localdate() + timedelta(days=days)).isoformat()


def test_one_group_per_rule_with_its_count_and_the_message_once(make_user: Any, catalog: None) -> None:
    page = signed_in(make_user, "oscar", "on-call").get("/findings/").content.decode()
    rag = group(page, "rag-keywords-languages")
    assert "3 findings" in rag and rag.count(SAME_MESSAGE) == 1  # said once, not once per tool
    assert all(f"condor:listThing{i}" in rag for i in range(3)) and "<details" in rag
    assert "1 finding" in group(page, "mutate-without-hitl")
    assert page.count('class="card finding-group"') == Finding.objects.values("rule", "severity").distinct().count()


def test_filters_still_narrow_the_groups(make_user: Any, catalog: None) -> None:
    client = signed_in(make_user, "oscar", "on-call")
    page = client.get("/findings/", {"severity": "error"}).content.decode()
    assert "group-error-mutate-without-hitl" in page and "rag-keywords-languages" not in page.split('id="results"')[1]


def test_others_are_offered_no_checkbox_and_are_refused(make_user: Any, catalog: None) -> None:
    client = signed_in(make_user, "oscar", "on-call")
    page = client.get("/findings/").content.decode()
    assert 'name="findings"' not in page and "Waive the ticked findings" not in page
    response = client.post(
        "/findings/waive",
        {"findings": ticked("rag-keywords-languages", "listThing0"), "justification": "x", "expires_on": in_days(9)},
    )
    assert response.status_code == 403 and Waiver.objects.count() == 0


def test_never_waivable_and_catalog_wide_findings_get_no_checkbox(make_user: Any, catalog: None) -> None:
    page = signed_in(make_user, "olga", "safety-officer").get("/findings/").content.decode()
    assert 'name="findings"' not in group(page, "mutate-without-hitl")
    assert 'name="findings"' not in group(page, "count-drift")
    rag = group(page, "rag-keywords-languages")
    assert rag.count('name="findings"') == 3 and 'data-check-all="warning-rag-keywords-languages"' in rag


def test_officer_waives_a_selection_in_one_go_with_one_audit_event_each(make_user: Any, catalog: None) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    selection = ticked("rag-keywords-languages", "listThing0", "listThing1") + ticked(
        "policy-class-fallback", "stopMedication"
    )
    response = officer.post(
        "/findings/waive?severity=warning",
        {"findings": selection, "justification": "German keywords ship in 2.4.", "expires_on": in_days(30)},
    )
    assert response.status_code == 302 and response["Location"] == "/findings/?severity=warning"
    waivers = Waiver.objects.order_by("tool__declared_id")
    assert [(w.tool.declared_id, w.rule) for w in waivers] == [
        ("listThing0", "rag-keywords-languages"),
        ("listThing1", "rag-keywords-languages"),
        ("stopMedication", "policy-class-fallback"),
    ]
    assert {w.justification for w in waivers} == {"German keywords ship in 2.4."}
    assert AuditEvent.objects.filter(action="catalog.waiver.granted").count() == 3
    page = officer.get(response["Location"]).content.decode()
    assert "3 waivers granted." in page and "2 waived" in group(page, "rag-keywords-languages")
    assert group(page, "rag-keywords-languages").count('name="findings"') == 1  # only listThing2 is left to waive


@pytest.mark.parametrize(
    ("change", "field", "error"),
    [
        ({"expires_on": in_days(200)}, "id_expires_on", "at most 180 days ahead"),
        ({"expires_on": in_days(-1)}, "id_expires_on", "must be in the future"),
        ({"justification": ""}, "id_justification", "This field is required."),
    ],
)
def test_a_refused_bulk_waiver_changes_nothing_and_keeps_the_input(
    make_user: Any, catalog: None, change: dict[str, str], field: str, error: str
) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    selection = ticked("rag-keywords-languages", "listThing0", "listThing2")
    data = {"findings": selection, "justification": "Keywords follow.", "expires_on": in_days(30), **change}
    response = officer.post("/findings/waive", data)
    assert response.status_code == 400 and Waiver.objects.count() == 0
    page = response.content.decode()
    assert f'<ul class="errorlist" id="{field}_error"><li>{error}</li></ul>' in page
    assert "autofocus" in tag(page, field) and 'aria-invalid="true"' in tag(page, field)
    for pk in selection:  # the ticks are kept
        assert tag(page, f"finding-{pk}").endswith(" checked>")
    if "justification" not in change:
        assert "Keywords follow.</textarea>" in page
    assert "expires_at" not in page


def test_a_selection_with_an_already_waived_finding_is_refused_as_a_whole(make_user: Any, catalog: None) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    first = ticked("rag-keywords-languages", "listThing0")
    officer.post("/findings/waive", {"findings": first, "justification": "one", "expires_on": in_days(5)})
    assert Waiver.objects.count() == 1
    both = first + ticked("rag-keywords-languages", "listThing1")
    response = officer.post("/findings/waive", {"findings": both, "justification": "two", "expires_on": in_days(5)})
    assert response.status_code == 400 and Waiver.objects.count() == 1
    assert "rag-keywords-languages is already waived for listThing0" in response.content.decode()


def test_an_unwaivable_or_empty_selection_is_refused_with_the_reason(make_user: Any, catalog: None) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    hard = ticked("mutate-without-hitl", "stopMedication")
    response = officer.post("/findings/waive", {"findings": hard, "justification": "no", "expires_on": in_days(5)})
    assert response.status_code == 400 and "can never be waived" in response.content.decode()
    empty = officer.post("/findings/waive", {"justification": "no", "expires_on": in_days(5)})
    assert empty.status_code == 400 and "Select at least one finding to waive." in empty.content.decode()
    assert Waiver.objects.count() == 0


def test_a_selection_is_bounded(make_user: Any, catalog: None) -> None:
    officer = signed_in(make_user, "olga", "safety-officer")
    ids = [str(i) for i in range(1, BULK_WAIVE_MAX + 2)]
    response = officer.post("/findings/waive", {"findings": ids, "justification": "all", "expires_on": in_days(5)})
    assert response.status_code == 400 and f"at most {BULK_WAIVE_MAX} per waiver" in response.content.decode()


def test_the_page_speaks_german(make_user: Any, catalog: None) -> None:
    from django.conf import settings
    from django.utils import translation

    officer = signed_in(make_user, "olga", "safety-officer")
    page = officer.get("/findings/", headers={"Accept-Language": "de"}).content.decode()
    refused = officer.post(
        "/findings/waive",
        {"findings": ticked("rag-keywords-languages", "listThing0"), "justification": "x", "expires_on": in_days(200)},
        headers={"Accept-Language": "de"},
    ).content.decode()
    translation.activate(settings.LANGUAGE_CODE)
    assert ">Schweregrad<" in page and ">Fehler<" in page and ">Warnung<" in page
    assert SAME_MESSAGE not in page  # the group's message in German too (catalog.domain.messages)
    assert "höchstens 180 Tage im Voraus" in refused


def test_query_count_does_not_grow_with_the_findings(
    manifests: Any, make_user: Any, django_assert_max_num_queries: Any
) -> None:
    tools = [manifests.condor_tool(f"listThing{i}", ragKeywords={"en": ["x"]}) for i in range(150)]
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[])), via="test")
    officer = signed_in(make_user, "olga", "safety-officer")
    officer.get("/findings/")  # the session's first request loads the language preference
    with django_assert_max_num_queries(10):
        page = officer.get("/findings/").content.decode()
    assert page.count('name="findings"') >= 150
