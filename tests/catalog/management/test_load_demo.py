"""The committed demo catalogs import cleanly and carry the realistic defects later checks must find."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.checks import run_checks
from django.core.management import call_command
from django.db.models import Count

from catalog.domain.keys import llm_name
from catalog.models import Agent, CatalogProfile, CatalogRevision, ForcedFloor, Tool
from tests.conftest import forget_caches, module_transaction

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def demo_output_once(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """`load_demo`, once for the module, and what it printed (tests/conftest.py, `module_transaction`)."""
    out = io.StringIO()
    with module_transaction(django_db_blocker):
        with django_db_blocker.unblock():
            call_command("load_demo", stdout=out)
        yield out.getvalue()


@pytest.fixture
def demo(demo_output_once: str, db: Any) -> str:
    forget_caches()
    return demo_output_once


def test_load_demo_imports_both_systems_and_prints_logins(demo: str) -> None:
    assert "condor r1:" in demo and "tucan r1:" in demo
    assert "admin" in demo and "condor-demo" in demo
    users = get_user_model().objects
    assert users.get(username="safety").groups.filter(name="safety-officer").exists()
    assert set(users.get(username="approver").groups.values_list("name", flat=True)) == {
        "approver",
        "approver:medication",
    }
    assert users.get(username="admin").is_superuser


def test_load_demo_is_idempotent(demo: str) -> None:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "condor: unchanged" in out.getvalue() and "tucan: unchanged" in out.getvalue()
    assert CatalogRevision.objects.count() == 3  # condor r1 signed off, r2 awaiting review; tucan r1


def test_demo_catalogs_look_like_the_real_thing(demo: str) -> None:
    condor = Tool.objects.filter(system="condor").live()
    tucan = Tool.objects.filter(system="tucan").live()
    assert 70 <= condor.count() <= 90
    assert 330 <= tucan.count() <= 370
    assert 30 <= tucan.values("category").distinct().count() <= 40
    assert set(condor.values_list("plane", flat=True)) == {"business", "planner-control", "agent-control"}
    assert {"search_tools", "load_tool"} <= set(condor.values_list("declared_id", flat=True))
    assert Agent.objects.filter(system="tucan").count() >= 5
    assert ForcedFloor.objects.filter(trigger="attachments").exists()
    assert ForcedFloor.objects.filter(trigger="multi-entity-intake").exists()
    assert CatalogProfile.objects.get(slug="clinical-production").clinical
    # Every Condor mutate descriptor declares its tier (the database would refuse otherwise).
    assert not condor.filter(policy_class="mutate", hitl_tier__isnull=True).exists()
    assert condor.filter(hitl_tier="high").exists() and condor.filter(hitl_tier="low").exists()


def test_demo_runs_under_the_clinical_profile(demo: str, settings: Any) -> None:
    settings.CONDOR_ACTIVE_PROFILE = "clinical-production"
    assert [m for m in run_checks(tags=["condor"]) if m.is_serious()] == []
    assert Tool.objects.live().exclude(availability="production").exists()  # preview/demo tools exist, inactive


def test_demo_carries_the_planted_defects(demo: str) -> None:
    live = Tool.objects.live()
    # An ungated TUCAN mutation, and a Condor mutating tool with no declared class (fallback stamping).
    assert live.filter(system="tucan", is_mutating=True, hitl_tier__isnull=True).exists()
    assert live.filter(system="condor", mutating=True, policy_class__isnull=True).exists()
    # Declared retry on a mutating tool; effective retry is none.
    retry = live.filter(is_mutating=True, retry_class="transient")
    assert retry.exists() and set(retry.values_list("effective_retry_class", flat=True)) == {"none"}
    # Unowned tools, in both systems.
    assert live.filter(system="condor", owner__isnull=True).exists()
    assert live.filter(system="tucan", owner__isnull=True).exists()
    # Missing German keywords, an over-long fragment, a UUID-leaking output, a near-duplicate sibling pair.
    assert any("de" not in (t.rag_keywords or {}) for t in live.filter(system="condor", plane="business"))
    assert any(len((t.instruction_fragment or "").encode()) > 120 for t in live.filter(system="condor"))
    assert any(
        t.output_contains_ids and "uuid" not in (t.output_instructions or "").lower()
        for t in live.filter(system="tucan")
    )
    duplicates = (
        live.values("system", "rag_description").annotate(n=Count("pk")).filter(n__gt=1, rag_description__gt="")
    )
    assert duplicates.exists()
    # The Mastra hyphen/underscore collision in TUCAN.
    names = list(live.filter(system="tucan").values_list("declared_id", flat=True))
    exposed = [llm_name(n) for n in names]
    assert len(set(exposed)) < len(exposed)
    # Audited baseline differs from the live business count (the seed's 76 vs 78).
    condor_revision = CatalogRevision.objects.get(system="condor", number=1)
    assert condor_revision.baseline_count != condor_revision.business_tool_count


PLANTED = {
    "mutate-without-hitl": None,  # checked below: the ungated Condor tool plus every mutating TUCAN tool
    "unowned": None,  # checked below: exportResearchCohort plus TUCAN's unowned categories
    "key-collision": {"tucan:show-notification-banner", "tucan:show_notification_banner"},
    "control-plane-candidate": {"condor:search_tools"},
    "retry-declared-on-mutating": {"condor:recordPayment"},
    "policy-class-fallback": {"condor:checkInPatient", "condor:attachDocumentToChart"},
    "rag-description-shape": {"condor:getAppointmentDetails", "tucan:archive-conversation"},
    "rag-keywords-languages": {
        "condor:getPatientContacts",
        "condor:suggestBillingCodes",
        "condor:getVitalsTrend",
        "tucan:get-fhir-capability-statement",
        "tucan:map-icd10-to-snomed",
        "tucan:get-wait-time-stats",
        "tucan:list-integrations",
        "tucan:list-voice-commands",
    },
    "uuid-output-instruction": {
        "condor:listPendingLabOrders",
        "tucan:get-referral",
        "tucan:list-my-tasks",
        "tucan:list-conversations",
    },
    "fragment-over-budget": {"condor:adjustMedicationDose"},
    "count-drift": {"condor:", "tucan:"},
    "llm-text-manipulation": set(),  # the demo's texts are clean: bench/manipulation.py measures the rule
}


def fired_on(rule: str) -> set[str]:
    from catalog.models import Finding

    return {
        f"{f.system}:{f.tool.declared_id if f.tool else ''}"
        for f in Finding.objects.filter(rule=rule).select_related("tool")
    }


@pytest.mark.parametrize("rule", sorted(PLANTED))
def test_each_rule_fires_on_exactly_the_demo_tools_that_break_it(demo: str, rule: str) -> None:
    expected = PLANTED[rule]
    if rule == "mutate-without-hitl":
        ungated = Tool.objects.live().filter(is_mutating=True, hitl_tier__isnull=True)
        expected = {f"{t.system}:{t.declared_id}" for t in ungated}
        assert "condor:attachDocumentToChart" in expected and len(expected) > 50
    if rule == "unowned":
        expected = {f"{t.system}:{t.declared_id}" for t in Tool.objects.live().filter(owner__isnull=True)}
        assert "condor:exportResearchCohort" in expected
    assert fired_on(rule) == expected


def test_manifest_line_bounds_fires_on_the_terse_demo_tools(demo: str) -> None:
    condor = {key for key in fired_on("manifest-line-bounds") if key.startswith("condor:")}
    assert {"condor:clinicalNoteCard", "condor:encounterTimelineCard", "condor:getAppointmentDetails"} <= condor
    assert "condor:prescribeMedication" not in condor


def test_rules_the_importer_refuses_fire_when_the_database_is_edited_behind_it(demo: str) -> None:
    """The importer refuses colour literals and non-production tools in clinical profiles (so the demo
    cannot carry them); the rules still catch rows edited behind its back once findings are recomputed."""
    from catalog.services.findings import findings_recompute

    assert fired_on("styling-colour-literal") == set() and fired_on("non-production-in-clinical") == set()
    CatalogProfile.objects.filter(slug="clinical-production").update(includes=["generateDemoPatient"])
    Tool.objects.filter(declared_id="patientSummaryCard").update(styling_fragment="Header in #c00.")
    findings_recompute("condor")
    assert fired_on("non-production-in-clinical") == {"condor:generateDemoPatient"}
    assert fired_on("styling-colour-literal") == {"condor:patientSummaryCard"}


def test_a_second_make_run_keeps_what_people_changed(demo: str) -> None:
    """`make run` loads with --if-empty: into a database that holds a catalog it writes nothing."""
    from catalog.models import CardTranslation

    string = CardTranslation.objects.filter(locale__code="de").first()
    assert string is not None
    string.forms = ["Von Hand geändert"]
    string.save(update_fields=["forms"])
    revisions = CatalogRevision.objects.count()
    out = io.StringIO()
    call_command("load_demo", "--if-empty", stdout=out)
    assert "not loaded again" in out.getvalue()
    assert CatalogRevision.objects.count() == revisions
    string.refresh_from_db()
    assert string.forms == ["Von Hand geändert"]


def test_demo_requests_give_the_demo_approvers_work_once(demo: str) -> None:
    """`make run` suspends a few calls through the evaluate service; restarting it adds none while any pends."""
    from approvals.models import ApprovalRequest

    out = io.StringIO()
    call_command("demo_requests", stdout=out)
    pending = ApprovalRequest.objects.pending()
    domains = sorted(pending.values_list("policy_domain", flat=True))
    assert domains == ["billing", "medication", "medication", "medication"], out.getvalue()
    assert {r.tool.system for r in pending.select_related("tool")} == {"condor", "tucan"}
    again = io.StringIO()
    call_command("demo_requests", stdout=again)
    assert "no demo requests added" in again.getvalue() and ApprovalRequest.objects.count() == 4
