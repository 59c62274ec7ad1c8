"""Findings at import, revision sign-off and waivers, through the services."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog.models import AuditEvent, CatalogRevision, Finding, RevisionReview, Tool, Waiver
from catalog.selectors.governance import finding_counts_per_rule, findings_list
from catalog.services.governance import GovernanceRefused, waiver_grant, waiver_revoke
from catalog.services.imports import catalog_import
from catalog.services.signoff import revision_review

pytestmark = pytest.mark.django_db


def do_import(manifests: Any, manifest: dict[str, Any], **kwargs: Any) -> Any:
    return catalog_import(raw=manifests.encode(manifest), via="test", **kwargs)


@pytest.fixture
def officer(make_user: Any) -> Any:
    return make_user("olga", "safety-officer")


@pytest.fixture
def ungated(manifests: Any) -> Any:
    """A catalog whose prescribeMedication is fine and whose stopMedication mutates without a tier."""
    tools = [
        manifests.mutate_tool("prescribeMedication"),
        manifests.condor_tool("listActiveMedications"),
        manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none"),
    ]
    return do_import(manifests, manifests.condor(tools, baselineCount=3))


def test_import_stores_findings_for_the_revision(ungated: Any) -> None:
    findings = Finding.objects.filter(system="condor")
    assert sorted(findings.values_list("rule", flat=True)) == ["mutate-without-hitl", "policy-class-fallback"]
    f = findings.get(rule="mutate-without-hitl")
    assert f.tool.declared_id == "stopMedication" and f.severity == "error" and f.revision == ungated.revision


def test_findings_are_recomputed_by_the_next_import(manifests: Any, ungated: Any) -> None:
    tools = [manifests.mutate_tool("prescribeMedication"), manifests.condor_tool("listActiveMedications")]
    do_import(manifests, manifests.condor(tools, baselineCount=3))
    assert list(Finding.objects.values_list("rule", "tool")) == [("count-drift", None)]


def test_a_revision_without_safety_changes_is_approved_automatically(manifests: Any, ungated: Any) -> None:
    assert ungated.revision.review_state == "pending-review" and not ungated.revision.auto_approved
    m = manifests.condor(
        [
            manifests.mutate_tool("prescribeMedication"),
            manifests.condor_tool("listActiveMedications", ragDescription="USE WHEN: new text."),
            manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none"),
        ],
        baselineCount=3,
    )
    result = do_import(manifests, m)
    assert result.revision.review_state == "approved" and result.revision.auto_approved


def test_ownership_changes_need_sign_off_even_without_tool_changes(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    m = manifests.condor()
    m["ownership"] = m["ownership"][1:]
    assert do_import(manifests, m).revision.review_state == "pending-review"


def test_tools_remember_the_revision_of_their_last_safety_change(manifests: Any, ungated: Any) -> None:
    m = manifests.condor(
        [
            manifests.mutate_tool("prescribeMedication", hitlTier="low"),
            manifests.condor_tool("listActiveMedications", ragDescription="USE WHEN: new text."),
            manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none"),
        ],
        baselineCount=3,
    )
    second = do_import(manifests, m).revision
    assert Tool.objects.get(declared_id="prescribeMedication").safety_revision == second
    assert Tool.objects.get(declared_id="listActiveMedications").safety_revision == ungated.revision


def test_safety_officer_approves_a_revision_with_audit(ungated: Any, officer: Any) -> None:
    review = revision_review(
        revision_id=ungated.revision.pk, reviewer=officer, decision="approved", comment="Checked the tiers."
    )
    # prescribeMedication is tier high: this approval counts, a second officer's puts the revision in effect.
    assert review.revision.review_state == "pending-review" and (review.approvals, review.required) == (1, 2)
    event = AuditEvent.objects.get(action="catalog.revision.reviewed")
    assert event.actor == "user:olga" and event.after == {
        "review_state": "pending-review",
        "decision": "approved",
        "comment": "Checked the tiers.",
        "approvals": 1,
        "required": 2,
        "put_in_effect": 0,
        "via": "console",
    }
    with pytest.raises(GovernanceRefused, match="already"):
        revision_review(revision_id=ungated.revision.pk, reviewer=officer, decision="approved", comment="Again")


def test_changes_requested_can_later_be_approved(ungated: Any, officer: Any) -> None:
    revision_review(revision_id=ungated.revision.pk, reviewer=officer, decision="changes-requested", comment="Tier!")
    assert CatalogRevision.objects.get(pk=ungated.revision.pk).review_state == "changes-requested"
    revision_review(revision_id=ungated.revision.pk, reviewer=officer, decision="approved", comment="Accepted risk.")
    assert RevisionReview.objects.filter(revision=ungated.revision).count() == 2


@pytest.mark.parametrize(
    ("who", "decision", "comment", "message", "forbidden"),
    [
        ("approver", "approved", "ok", "only a safety officer", True),
        ("officer", "maybe", "ok", "decision must be one of", False),
        ("officer", "approved", "   ", "comment:", False),
    ],
)
def test_review_refusals(
    ungated: Any, make_user: Any, officer: Any, who: str, decision: str, comment: str, message: str, forbidden: bool
) -> None:
    user = officer if who == "officer" else make_user("alex", "approver", "approver:medication")
    with pytest.raises(GovernanceRefused, match=message) as info:
        revision_review(revision_id=ungated.revision.pk, reviewer=user, decision=decision, comment=comment)
    assert info.value.forbidden is forbidden
    assert CatalogRevision.objects.get(pk=ungated.revision.pk).review_state == "pending-review"
    assert not AuditEvent.objects.filter(action="catalog.revision.reviewed").exists()


def test_the_importer_may_not_sign_off_their_own_revision(manifests: Any, officer: Any) -> None:
    result = do_import(manifests, manifests.condor(), imported_by=officer)
    with pytest.raises(GovernanceRefused, match="another safety officer") as info:
        revision_review(revision_id=result.revision.pk, reviewer=officer, decision="approved", comment="Mine")
    assert info.value.forbidden


def grant(tool: str, rule: str, officer: Any, days: int = 30, justification: str = "Vendor fix due.") -> Waiver:
    return waiver_grant(
        tool_id=Tool.objects.get(declared_id=tool).pk,
        rule=rule,
        justification=justification,
        expires_at=timezone.now() + timedelta(days=days),
        granted_by=officer,
    )


def test_a_waived_finding_still_shows_marked_with_who_and_until(ungated: Any, officer: Any) -> None:
    waiver = grant("stopMedication", "policy-class-fallback", officer)
    (f,) = findings_list(rule="policy-class-fallback")
    assert f.waived_until == waiver.expires_at and f.waived_by == "olga"
    assert list(findings_list(waived=True)) == [f]
    assert [x.rule for x in findings_list(waived=False)] == ["mutate-without-hitl"]
    counts = {c["rule"]: c for c in finding_counts_per_rule()}
    assert counts["policy-class-fallback"] == {
        "rule": "policy-class-fallback",
        "severity": "warning",
        "total": 1,
        "waived": 1,
        "open": 0,
    }
    assert AuditEvent.objects.filter(action="catalog.waiver.granted").count() == 1


def test_an_expired_waiver_stops_counting_by_itself(ungated: Any, officer: Any) -> None:
    waiver = grant("stopMedication", "policy-class-fallback", officer, days=10)
    later = timezone.now() + timedelta(days=11)
    (f,) = findings_list(rule="policy-class-fallback", now=later)
    assert f.waived_until is None
    assert waiver.pk in Waiver.objects.values_list("pk", flat=True)


def test_a_revoked_waiver_stops_counting(ungated: Any, officer: Any) -> None:
    waiver = grant("stopMedication", "policy-class-fallback", officer)
    waiver_revoke(waiver_id=waiver.pk, revoked_by=officer)
    (f,) = findings_list(rule="policy-class-fallback")
    assert f.waived_until is None
    with pytest.raises(GovernanceRefused, match="already revoked"):
        waiver_revoke(waiver_id=waiver.pk, revoked_by=officer)


@pytest.mark.parametrize(
    ("rule", "days", "justification", "message"),
    [
        ("mutate-without-hitl", 30, "why", "can never be waived"),
        ("non-production-in-clinical", 30, "why", "can never be waived"),
        ("no-such-rule", 30, "why", "unknown rule"),
        ("policy-class-fallback", 181, "why", "at most 180 days"),
        ("policy-class-fallback", -1, "why", "must be in the future"),
        ("policy-class-fallback", 30, "  ", "justification:"),
    ],
)
def test_waiver_refusals(ungated: Any, officer: Any, rule: str, days: int, justification: str, message: str) -> None:
    with pytest.raises(GovernanceRefused, match=message):
        grant("stopMedication", rule, officer, days=days, justification=justification)
    assert Waiver.objects.count() == 0


def test_only_safety_officers_waive(ungated: Any, make_user: Any) -> None:
    with pytest.raises(GovernanceRefused, match="only a safety officer") as info:
        grant("stopMedication", "policy-class-fallback", make_user("cat", "catalog-admin", is_superuser=True))
    assert info.value.forbidden


def test_a_second_active_waiver_for_the_same_rule_is_refused(ungated: Any, officer: Any) -> None:
    grant("stopMedication", "policy-class-fallback", officer)
    with pytest.raises(GovernanceRefused, match="already waived"):
        grant("stopMedication", "policy-class-fallback", officer)


def test_the_database_refuses_a_waiver_of_an_unwaivable_rule(ungated: Any, officer: Any) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Waiver.objects.create(
            tool=Tool.objects.get(declared_id="stopMedication"),
            rule="mutate-without-hitl",
            justification="sneaky",
            expires_at=timezone.now() + timedelta(days=1),
            granted_by=officer,
        )
