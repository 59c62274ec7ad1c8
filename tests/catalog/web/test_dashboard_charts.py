"""The dashboard's pictures: findings per revision, approvals waiting and their decision latency, embedding state;
each an SVG whose text alternative states every figure, in a fixed number of queries."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from approvals.models import ApprovalRequest
from approvals.templatetags.approval_charts import approval_figures_now
from catalog.models import Tool
from catalog.selectors.dashboard import findings_history
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_revisions(manifests: Any) -> None:
    """r1: three tools without German keywords (3 warnings); r2 gives one German keywords and adds an ungated
    mutation (1 error, policy-class-fallback warning)."""
    tools = [manifests.condor_tool(f"listThing{i}", ragKeywords={"en": ["x"]}) for i in range(3)]
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[], baselineCount=3)), via="test")
    tools[0]["ragKeywords"] = {"en": ["x"], "de": ["y"]}
    tools.append(manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none"))
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[], baselineCount=4)), via="test")


def client_for(make_user: Any, *groups: str) -> Client:
    client = Client()
    client.force_login(make_user("u-" + "-".join(groups), *groups))
    client.get("/")  # the session's first request loads the language preference
    return client


def aria_labels(page: str) -> list[str]:
    return re.findall(r'<svg class="bar-chart"[^>]*aria-label="([^"]*)"', page)


def test_findings_per_revision_are_rebuilt_from_each_imports_delta(two_revisions: None) -> None:
    (condor,) = findings_history()
    # r1: 3 rag-keywords warnings; r2: 2 of them left, + mutate-without-hitl (error) + policy-class-fallback.
    assert condor.system == "condor" and condor.points == [("r1", 3, 0), ("r2", 4, 1)]


def request_row(
    tool: Tool, *, tier: str, age: timedelta, decided_after: timedelta | None = None, decider: Any = None
) -> ApprovalRequest:
    created = timezone.now() - age
    return ApprovalRequest.objects.create(
        idempotency_key=f"k-{tier}-{age}-{decided_after}",
        tool=tool,
        tool_system=tool.system,
        tool_declared_id=tool.declared_id,
        requested_name=tool.declared_id,
        profile="clinical-production",
        dispatch_mode="operator",
        run_id="run-1",
        requested_by="dr-a",
        proposed_args={},
        proposed_sha256="0" * 64,
        policy_domain="medication",
        hitl_tier=tier,
        tier_key=tier,
        policy_reason="tier",
        state="rejected" if decided_after else "pending",
        decided_by=decider,
        decision_reason="not now" if decided_after else "",
        created_at=created,
        expires_at=created + timedelta(hours=2),
        decided_at=created + decided_after if decided_after else None,
    )


def test_approval_figures_count_waiting_per_tier_and_the_median_latency_per_day(
    two_revisions: None, make_user: Any, django_assert_num_queries: Any
) -> None:
    anna = make_user("anna", "approver", "approver:medication")
    tool = Tool.objects.get(declared_id="listThing1")
    request_row(tool, tier="high", age=timedelta(minutes=5))
    request_row(tool, tier="low", age=timedelta(minutes=6))
    request_row(tool, tier="low", age=timedelta(minutes=7))
    for seconds in (30, 60, 300):
        request_row(
            tool, tier="high", age=timedelta(minutes=20), decided_after=timedelta(seconds=seconds), decider=anna
        )
    with django_assert_num_queries(2):
        figures = approval_figures_now()
    assert [n for _, n in figures.waiting] == [1, 2, 0]
    assert len(figures.latency) == 7 and figures.latency[-1][1] == 60 and figures.decided == 3
    assert [n for _, n in figures.latency[:-1]] == [0] * 6


def test_the_dashboard_draws_every_picture_with_its_figures_in_words(
    make_user: Any, two_revisions: None, django_assert_max_num_queries: Any
) -> None:
    officer = client_for(make_user, "safety-officer")
    with django_assert_max_num_queries(24):
        page = officer.get("/").content.decode()
    labels = aria_labels(page)
    findings = next(a for a in labels if a.startswith("Findings of condor"))
    assert "r1: findings 3, errors 0" in findings and "r2: findings 4, errors 1" in findings
    assert any(a.startswith("Approval requests pending now, per HITL tier") for a in labels)
    assert any(a.startswith("Median seconds from suspension to decision") for a in labels)
    embedding = next(a for a in labels if a.startswith("Live tools by the state of their vector"))
    assert "Missing: tools 4" in embedding


def test_people_who_see_no_approvals_get_no_approval_pictures(make_user: Any, two_revisions: None) -> None:
    page = client_for(make_user, "translator").get("/").content.decode()
    assert "Approvals waiting now" not in page and "Findings of condor" in page


def test_the_pictures_speak_german(make_user: Any, two_revisions: None) -> None:
    from django.conf import settings
    from django.utils import translation

    page = client_for(make_user, "safety-officer").get("/", headers={"Accept-Language": "de"}).content.decode()
    translation.activate(settings.LANGUAGE_CODE)
    labels = " ".join(aria_labels(page))
    assert "Befunde" in labels and "Findings of" not in labels and "Median seconds" not in labels
