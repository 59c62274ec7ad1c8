"""What sign-off would change, and what the revision page reads: the awaiting tools' diffs in effect → newest
declaration, the approvals that count, who may decide, in a bounded number of queries."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.models import CatalogRevision, Tool
from catalog.selectors.floors import tier_floors_forget
from catalog.selectors.governance import revisions_list
from catalog.selectors.reviews import counted_approvals
from catalog.selectors.signoff import decision_state, revision_detail, signoff_preview, tool_in_effect
from catalog.services.imports import catalog_import
from catalog.services.signoff import revision_review
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import

pytestmark = pytest.mark.django_db

REWRITTEN = (
    "USE WHEN: the clinician asks to prescribe any medication at all.\n"
    "DO NOT USE WHEN: never.\nREQUIRES: nothing.\nPRODUCES: a prescription."
)


def tools(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    """The signed-off catalog, with per-tool overrides."""
    return [
        mutate_tool("prescribeMedication", **changes.get("prescribeMedication", {})),
        mutate_tool("bookAppointment", module="appointment", policyDomain="appointment", hitlTier="low"),
        condor_tool("listActiveMedications", **changes.get("listActiveMedications", {})),
    ]


@pytest.fixture
def importer(make_user: Any) -> Any:
    return make_user("ingrid", "catalog-admin")


@pytest.fixture
def officers(make_user: Any) -> tuple[Any, Any]:
    return make_user("olga", "safety-officer"), make_user("otto", "safety-officer")


@pytest.fixture
def pending(importer: Any) -> CatalogRevision:
    """r1 signed off; r2 lowers the tier-high prescription tool to low, rewrites its description and (a
    strengthening change) stops retrying the medication list."""
    signed_import(encode(condor_manifest(tools())))
    changes = {
        "prescribeMedication": {"hitlTier": "low", "ragDescription": REWRITTEN},
        "listActiveMedications": {"retryClass": "none"},
    }
    result = catalog_import(raw=encode(condor_manifest(tools(**changes))), via="test", imported_by=importer)
    assert result.revision is not None
    return result.revision


def approve(revision: CatalogRevision, officer: Any, decision: str = "approved") -> Any:
    return revision_review(revision_id=revision.pk, reviewer=officer, decision=decision, comment="checked")


def test_preview_lists_only_the_weakened_tool_with_its_diff_and_two_signoffs(pending: CatalogRevision) -> None:
    preview = signoff_preview("condor")
    assert preview is not None and preview.revision.pk == pending.pk
    assert [t.declared_id for t in preview.tools] == ["prescribeMedication"]  # the retry change took effect
    tool = preview.tools[0]
    assert tool.in_effect_revision == 1 and tool.two_signoffs
    fields = {f.name: f for f in tool.fields}
    assert set(fields) == {"hitl_tier", "rag_description"}
    assert (fields["hitl_tier"].klass, fields["hitl_tier"].diff.old, fields["hitl_tier"].diff.new) == (
        "weakening",
        "high",
        "low",
    )
    text = fields["rag_description"].diff
    assert text.kind == "text" and text.new_text == REWRITTEN  # whole, not cut
    assert (preview.approvals, preview.required, preview.two_signoff_tools) == ([], 2, ["prescribeMedication"])


def test_one_approval_counts_and_a_request_for_changes_resets_the_count(
    pending: CatalogRevision, officers: tuple[Any, Any]
) -> None:
    olga, otto = officers
    approve(pending, olga)
    preview = signoff_preview("condor")
    assert preview is not None and (preview.approvals, preview.required) == (["olga"], 2)
    approve(pending, otto, "changes-requested")
    preview = signoff_preview("condor")
    assert preview is not None and preview.approvals == []
    page = revision_detail("condor", 2)
    assert page.approvals == [] and page.counted == set() and len(page.reviews) == 2


def test_list_counts_approvals_as_the_signoff_service_does(pending: CatalogRevision, officers: tuple[Any, Any]) -> None:
    olga, otto = officers
    approve(pending, olga)
    listed = {r.number: r for r in revisions_list(system="condor")}
    assert (listed[2].approvals, listed[2].signoffs_required) == (1, 2)  # type: ignore[attr-defined]
    assert listed[1].approvals == 2  # type: ignore[attr-defined]  # the fixture's two officers
    approve(pending, otto, "changes-requested")
    approve(pending, otto)
    service_count = counted_approvals(pending).values("reviewer").distinct().count()
    assert revisions_list(system="condor").get(number=2).approvals == service_count == 1  # type: ignore[attr-defined]


def test_nothing_to_preview_once_signed_off(pending: CatalogRevision, officers: tuple[Any, Any]) -> None:
    approve(pending, officers[0])
    assert approve(pending, officers[1]).in_effect
    assert signoff_preview("condor") is None
    page = revision_detail("condor", 2)
    assert page.preview is None and page.approvals == ["olga", "otto"] and page.remaining == 0


def test_a_new_tool_is_previewed_as_not_in_effect_with_its_proposed_axes(importer: Any) -> None:
    signed_import(encode(condor_manifest(tools())))
    grown = [*tools(), mutate_tool("stopMedication", hitlTier="high")]
    catalog_import(raw=encode(condor_manifest(grown)), via="test", imported_by=importer)
    preview = signoff_preview("condor")
    assert preview is not None
    (tool,) = preview.tools
    assert tool.declared_id == "stopMedication" and tool.in_effect_revision is None and tool.fields == []
    assert ("hitl_tier", "high") in tool.proposed_axes and tool.two_signoffs
    change = revision_detail("condor", 2).changes[0]
    assert change.change.kind == "added" and change.klass == "weakening"


def test_who_may_decide(pending: CatalogRevision, importer: Any, officers: tuple[Any, Any], make_user: Any) -> None:
    olga, otto = officers
    page = revision_detail("condor", 2)
    assert decision_state(page, importer).reason == "importer"
    assert decision_state(page, make_user("oscar", "on-call")) == decision_state(page, importer).__class__(
        form=False, may_approve=False, reason="not-officer"
    )
    assert decision_state(page, olga).may_approve
    approve(pending, olga)
    page = revision_detail("condor", 2)
    mine, theirs = decision_state(page, olga), decision_state(page, otto)
    assert (mine.form, mine.may_approve, mine.reason) == (True, False, "already-approved")
    assert theirs.may_approve
    approve(pending, otto)
    assert decision_state(revision_detail("condor", 2), otto).reason == "decided"


def test_an_older_undecided_revision_points_to_the_newer_one(
    pending: CatalogRevision, importer: Any, officers: tuple[Any, Any]
) -> None:
    newer = {"prescribeMedication": {"hitlTier": "low", "ragDescription": REWRITTEN, "module": "prescriptions"}}
    catalog_import(raw=encode(condor_manifest(tools(**newer))), via="test", imported_by=importer)
    old = revision_detail("condor", 2)
    assert old.preview is None and old.newer is not None and old.newer.number == 3
    state = decision_state(old, officers[0])
    assert (state.form, state.may_approve, state.reason) == (True, False, "not-newest")
    assert revision_detail("condor", 3).preview is not None


def test_findings_added_by_the_revision_are_listed_with_their_message(pending: CatalogRevision) -> None:
    page = revision_detail("condor", 2)
    added = {(f.rule, f.declared_id): f for f in page.findings_added}
    assert ("hitl-tier-below-floor", "prescribeMedication") in added
    finding = added[("hitl-tier-below-floor", "prescribeMedication")]
    assert finding.severity == "error" and "high" in finding.message


def test_tool_page_notice_shows_what_clinical_profiles_are_served(pending: CatalogRevision) -> None:
    waiting = tool_in_effect(Tool.objects.get(declared_id="prescribeMedication"))
    assert waiting is not None and not waiting.never_signed_off and waiting.in_effect_revision == 1
    assert waiting.revision is not None and waiting.revision.number == 2
    assert {f.name for f in waiting.fields} == {"hitl_tier", "rag_description"}
    assert tool_in_effect(Tool.objects.get(declared_id="listActiveMedications")) is None


def test_revision_page_reads_stay_bounded_whatever_the_number_of_changes(
    importer: Any, django_assert_max_num_queries: Any
) -> None:
    # Medication tools: lowering them to low adds a hitl-tier-below-floor finding each (the findings query too).
    many = [mutate_tool(f"recordThing{i}") for i in range(60)]
    signed_import(encode(condor_manifest(many, forcedFloors=[])))
    for tool in many:
        tool.update(hitlTier="low", ragDescription=tool["ragDescription"] + " Now also for drafts.")
    catalog_import(raw=encode(condor_manifest(many, forcedFloors=[])), via="test", imported_by=importer)
    tier_floors_forget()  # the served tiers read the floors: their version, and the rows when not kept (+2)
    with django_assert_max_num_queries(11):
        page = revision_detail("condor", 2)
        assert page.preview is not None
    assert len(page.changes) == 60 and len(page.preview.tools) == 60 and len(page.findings_added) == 60
    tier_floors_forget()
    with django_assert_max_num_queries(7):
        preview = signoff_preview("condor")
    assert preview is not None and preview.required == 2
