"""The everyday console pages, as people use them: catalog browser, exports, tool page, owner lookup, teams."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from catalog.models import CatalogRevision, Tool

pytestmark = pytest.mark.django_db


def rows(client: Client, **params: str) -> list[str]:
    """The tool ids of the catalog table (first page) for these filters."""
    body = client.get("/catalog/", params).content.decode()
    table = body.split("<tbody>")[1].split("</tbody>")[0]
    return [chunk.split("</a>")[0].split(">")[-1] for chunk in table.split('class="mono" href="/tools/')[1:]]


def test_catalog_filters_by_each_axis(demo: None, oncall: Client) -> None:
    assert set(rows(oncall, system="condor", plane="planner-control")) == {
        t.declared_id for t in Tool.objects.live().filter(system="condor", plane="planner-control")
    }
    unowned = rows(oncall, owner="-")
    assert "exportResearchCohort" in unowned and all(Tool.objects.get(declared_id=i).owner is None for i in unowned)
    ungated = rows(oncall, system="condor", mutating="yes", hitl="none")
    assert ungated == ["attachDocumentToChart"]
    assert rows(oncall, system="condor", retry="transient", mutating="yes") == []
    assert rows(oncall, q="aktuelle Medikation")  # German keyword search
    assert "prescribeMedication" in rows(oncall, q="prescribe_medication")  # any spelling of the id


def test_each_catalog_row_shows_its_tool_as_stored(demo: None, oncall: Client) -> None:
    """Every cell of a row against the database: links, owner (or the unowned badge), findings, sign-off."""
    tucan = Tool.objects.live().filter(system="tucan", safety_revision__isnull=False).first()
    assert tucan is not None and tucan.safety_revision is not None
    CatalogRevision.objects.filter(pk=tucan.safety_revision.pk).update(review_state="approved")  # one signed off
    body = oncall.get("/catalog/", {"sort": "-findings"}).content.decode()
    table = body.split("<tbody>")[1].split("</tbody>")[0]
    seen: list[tuple[bool, bool]] = []
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
        href, declared_id = re.search(r'<a class="mono" href="([^"]+)">([^<]+)</a>', row).groups()  # type: ignore[union-attr]
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        tool = Tool.objects.select_related("owner", "safety_revision").get(
            system=cells[0], declared_id=html.unescape(declared_id)
        )
        assert href == reverse("tool", args=[tool.system, tool.declared_id])
        if tool.owner:
            assert f'<a href="{reverse("team", args=[tool.owner.slug])}">{tool.owner.slug}</a>' == cells[3]
        else:
            assert "unowned" in cells[3]
        assert re.sub(r"<[^>]+>", "", cells[9]) == str(tool.findings.count())
        signed_off = tool.safety_revision is not None and tool.safety_revision.review_state == "approved"
        assert ("badge approved" in cells[10]) is signed_off
        seen.append((tool.owner is None, signed_off))
    assert len(seen) == 50 and len(set(seen)) >= 3  # owned and unowned, signed off and not, on this page


def test_profile_filter_answers_what_is_plan_eligible(demo: None, oncall: Client) -> None:
    body = oncall.get("/catalog/", {"system": "condor", "profile": "clinical-production"}).content.decode()
    eligible = Tool.objects.live().filter(system="condor", plane="business", availability="production").count()
    assert f"{eligible} tools" in body
    names = rows(oncall, system="condor", profile="clinical-production", q="demo")
    assert "generateDemoPatient" not in names
    assert "search_tools" not in rows(oncall, profile="demo", q="search")  # never a business candidate


def test_catalog_sorts_and_paginates(demo: None, oncall: Client) -> None:
    by_findings = rows(oncall, system="condor", sort="-findings")
    counts = [Tool.objects.get(system="condor", declared_id=i).findings.count() for i in by_findings]
    assert counts == sorted(counts, reverse=True)
    first, second = rows(oncall, system="tucan"), rows(oncall, system="tucan", page="2")
    assert len(first) == 50 and not set(first) & set(second)


def test_catalog_htmx_request_gets_only_the_table(demo: None, oncall: Client) -> None:
    body = oncall.get("/catalog/", {"system": "condor"}, headers={"HX-Request": "true"}).content.decode()
    assert body.lstrip().startswith('<div id="catalog-table">') and "<html" not in body
    assert 'id="id_sort"' in body and 'hx-swap-oob="true"' in body


def test_bad_filter_values_fall_back_to_the_whole_catalog(demo: None, oncall: Client) -> None:
    response = oncall.get("/catalog/", {"plane": "nonsense", "page": "999"})
    assert response.status_code == 200
    # One bad value among good ones: the whole catalog, not the good ones alone (the filters are checked as a whole).
    assert rows(oncall, system="tucan") != rows(oncall)
    assert rows(oncall, plane="nonsense", system="tucan") == rows(oncall) == rows(oncall, system="tucan", hitl="x")


def test_a_bad_filter_value_is_shown_beside_its_field_and_the_input_is_kept(demo: None, oncall: Client) -> None:
    body = oncall.get("/catalog/", {"plane": "nonsense", "system": "tucan", "q": "Termin"}).content.decode()
    plane = body.split('<select name="plane"')[1].split("</label>")[1]
    assert plane.startswith('<ul class="errorlist" id="id_plane_error"><li>') and "nonsense" in plane.split("</ul>")[0]
    assert 'aria-describedby="id_plane_error"' in body.split('<select name="plane"')[1].split(">")[0]
    assert '<option value="tucan" selected>tucan</option>' in body and 'value="Termin"' in body
    assert body.count('class="errorlist"') == 1  # only the field that is wrong


def test_exports_hold_exactly_the_filtered_set(demo: None, oncall: Client) -> None:
    params = {"system": "tucan", "mutating": "yes"}
    expected = set(Tool.objects.live().filter(system="tucan", is_mutating=True).values_list("declared_id", flat=True))
    assert len(expected) > 50  # more than one page
    data = json.loads(oncall.get("/catalog/export.json", params).content)
    assert {row["declared_id"] for row in data} == expected
    assert all(row["effective_policy_class"] == "mutate" and row["hitl_tier"] is None for row in data)
    response = oncall.get("/catalog/export.csv", params)
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="condor-catalog-')
    reader = csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode()))
    assert {row["declared_id"] for row in reader} == expected
    assert oncall.get("/catalog/export.xml").status_code == 404


def test_tool_page_shows_declared_beside_effective(demo: None, oncall: Client) -> None:
    body = oncall.get("/tools/condor/recordPayment/").content.decode()
    assert "transient" in body and "(because it mutates)" in body
    assert "billing" in body and "Escalation" in body
    assert "Candidate manifest line" in body and "bytes (bounds 120–300)" in body
    assert "record.payment" in body  # canonical key among the spellings
    assert "retry-declared-on-mutating" in body
    assert "r1" in body  # revision history
    metadata = html.unescape(body.split("Metadata V2")[1].split("</pre>")[0])
    assert "'retry': {'declared': 'transient', 'effective': 'none'}" in metadata


def test_tool_page_of_a_tucan_tool_lists_agents_and_llm_name(demo: None, oncall: Client) -> None:
    body = oncall.get("/tools/tucan/list-active-medications/").content.decode()
    assert "list_active_medications" in body
    assert "TUCAN agents that see it" in body and "clinical" in body


def test_tool_page_404(demo: None, oncall: Client) -> None:
    assert oncall.get("/tools/condor/noSuchTool/").status_code == 404


@pytest.mark.parametrize(
    "spelling",
    [
        "visitRecordingCard",
        "visit_recording_card",
        "visit-recording-card",
        "visit.recording.card",
        "Visit Recording Card",
    ],
)
def test_owner_lookup_finds_any_spelling(demo: None, oncall: Client, spelling: str) -> None:
    body = oncall.get("/owners/", {"q": spelling}).content.decode()
    assert "condor:visitRecordingCard" in body and "@cards-oncall" in body


def test_owner_lookup_by_alias(demo: None, oncall: Client) -> None:
    tool = Tool.objects.live().exclude(aliases=[]).filter(system="condor").first()
    assert tool is not None
    body = oncall.get("/owners/", {"q": tool.aliases[0]}).content.decode()
    assert f"condor:{tool.declared_id}" in body and "matched by alias" in body


def test_owner_lookup_suggests_the_real_tool_for_a_hallucinated_name(demo: None, oncall: Client) -> None:
    body = oncall.get("/owners/", {"q": "get_clinical_notes"}).content.decode()
    assert "No tool is called" in body and "Did you mean" in body
    suggestions = body.split("Did you mean")[1]
    assert "tucan:list-clinical-notes" in suggestions


def test_owner_lookup_api_and_its_token(client: Client, demo: None, make_token: Any) -> None:
    auth = {"Authorization": f"Bearer {make_token()}"}
    body = client.get("/api/v1/owners/lookup", {"q": "visit-recording-card"}, headers=auth).json()
    assert body["found"] and body["matches"][0]["id"] == "visitRecordingCard"
    assert body["matches"][0]["owner"]["oncall"] == "@cards-oncall"
    near = client.get("/api/v1/owners/lookup", {"q": "get_clinical_notes"}, headers=auth).json()
    assert not near["found"] and "list-clinical-notes" in [t["id"] for t in near["did_you_mean"]]
    assert client.get("/api/v1/owners/lookup", {"q": ""}, headers=auth).status_code == 422
    assert client.get("/api/v1/owners/lookup", {"q": "x"}).status_code == 401


def test_whoowns_command(demo: None) -> None:
    out = io.StringIO()
    call_command("whoowns", "visit_recording_card", stdout=out)
    assert "condor:visitRecordingCard" in out.getvalue() and "on call     @cards-oncall" in out.getvalue()
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("whoowns", "get_clinical_notes", stdout=out)
    assert exit_info.value.code == 1 and "did you mean tucan:list-clinical-notes" in out.getvalue()


def test_teams_page_and_team_page(demo: None, oncall: Client) -> None:
    body = oncall.get("/teams/").content.decode()
    assert "Clinical Medication" in body or "clinical-meds" in body
    team = oncall.get("/teams/clinical-meds/").content.decode()
    assert "prescribeMedication" in team and "business / medication" in team
    assert oncall.get("/teams/nobody/").status_code == 404


def test_dashboard_shows_counts_charts_and_pending_revisions(demo: None, oncall: Client) -> None:
    body = oncall.get("/").content.decode()
    assert '<svg class="chart"' in body
    assert "Revisions awaiting sign-off" in body and "condor r2" in body  # r1 signed off by the demo
    assert "clinical-production" in body
    assert "mutate-without-hitl" in body


def test_the_filter_controls_show_the_submitted_values_in_the_readers_language(demo: None, oncall: Client) -> None:
    """Each reader gets the labels in their language and the values they submitted, and nothing of another's."""
    query = {"owner": "-", "hitl": "high", "q": "Termin"}
    for _ in range(2):  # asked again, in turn, each answer is the same
        german = oncall.get("/catalog/", query, headers={"Accept-Language": "de"}).content.decode()
        english = oncall.get("/catalog/", query, headers={"Accept-Language": "en"}).content.decode()
        plain = oncall.get("/catalog/", headers={"Accept-Language": "en"}).content.decode()
        assert ">Suche<" in german and ">Search<" in english and ">Search<" in plain
        for body in (german, english):
            assert '<option value="-" selected>' in body and '<option value="high" selected>high</option>' in body
            assert 'value="Termin"' in body
        owner_select = plain.split('id="id_owner"')[1].split("</select>")[0]
        assert owner_select.count(" selected>") == 1 and '<option value="" selected>' in owner_select


def test_owner_lookup_reads_any_number_of_matched_tools(demo: None) -> None:
    from catalog.selectors.owners import _tools_by_pk

    pks = list(Tool.objects.live().order_by("pk").values_list("pk", flat=True)[:17])
    for n in (0, 1, 3, 8, 9, 17):
        found = _tools_by_pk(set(pks[:n]))
        assert sorted(found) == sorted(pks[:n])
        for pk, tool in found.items():
            stored = Tool.objects.select_related("owner", "owner_rule").get(pk=pk)
            assert (tool.declared_id, tool.owner, tool.owner_rule) == (
                stored.declared_id,
                stored.owner,
                stored.owner_rule,
            )


def test_a_row_shows_what_changed_since_it_was_last_shown(demo: None, oncall: Client) -> None:
    """A sign-off or an owner change after a first view shows at the next one, and the same row in German is
    German."""
    tool = Tool.objects.live().filter(system="condor", owner__isnull=False, safety_revision__isnull=False).first()
    assert tool is not None and tool.safety_revision is not None and tool.owner is not None

    def row(language: str = "en") -> str:
        body = oncall.get("/catalog/", {"q": tool.declared_id}, headers={"Accept-Language": language}).content.decode()
        found = [r for r in re.findall(r"<tr>(.*?)</tr>", body, re.S) if f">{tool.declared_id}</a>" in r]
        assert len(found) == 1
        return found[0]

    CatalogRevision.objects.filter(pk=tool.safety_revision.pk).update(review_state="pending-review")
    before = row()
    assert '<span class="badge pending-review">no</span>' in before
    assert f'<a href="{reverse("team", args=[tool.owner.slug])}">{tool.owner.slug}</a>' in before
    CatalogRevision.objects.filter(pk=tool.safety_revision.pk).update(review_state="approved")
    Tool.objects.filter(pk=tool.pk).update(owner=None)
    after = row()
    assert '<span class="badge approved">yes</span>' in after and "pending-review" not in after
    assert '<span class="badge error">unowned</span>' in after and "/teams/" not in after
    german = row("de")
    assert '<span class="badge approved">ja</span>' in german and "ohne Zuständigkeit" in german


def test_sort_links_keep_the_current_filters(demo: None, oncall: Client) -> None:
    """The column heads link to the other sort order with exactly the filters on screen, in the reader's
    language."""
    for system in ("condor", "tucan", "condor"):
        body = oncall.get("/catalog/", {"system": system, "sort": "owner"}).content.decode()
        head = body.split("<thead>")[1].split("</thead>")[0]
        assert f'href="?system={system}&amp;sort=-owner"' in head and "Owner ▲" in head
        assert f'href="?system={system}&amp;sort=plane"' in head and "Plane ▲" not in head
        other = "tucan" if system == "condor" else "condor"
        assert f"system={other}" not in head
    body = oncall.get("/catalog/", {"q": 'a&b"<x>', "system": "tucan"}, headers={"Accept-Language": "de"}).content
    head = body.decode().split("<thead>")[1].split("</thead>")[0]
    assert 'href="?q=a%26b%22%3Cx%3E&amp;system=tucan&amp;sort=-id"' in head and "Tool ▲" in head
    assert ">Zuständig<" in head
