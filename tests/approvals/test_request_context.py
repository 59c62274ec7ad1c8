"""The request page gives the approver the context to decide (issue 23, item 7): what the tool is for, owner and
on-call (linked), open findings, whether its declaration in effect is signed off, the patient's other requests."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.selectors import use_when_of
from catalog.models import Finding, Team, Tool

from .conftest import Runtime

pytestmark = pytest.mark.django_db


def test_use_when_is_the_use_when_line_else_the_first_line() -> None:
    rag = "USE WHEN: the clinician asks to prescribe.\nDO NOT USE WHEN: renewing."
    assert use_when_of(rag, "") == "the clinician asks to prescribe."
    assert use_when_of("", "Create a prescription.\nMore.") == "Create a prescription."
    assert use_when_of("", "") == ""


def test_the_request_page_shows_the_tools_context_in_a_fixed_number_of_queries(
    runtime: Runtime, approver: Any, django_assert_max_num_queries: Any
) -> None:
    tool = Tool.objects.get(declared_id="prescribeMedication")
    team = Team.objects.create(
        slug="pharmacy", name="Pharmacy", oncall="oncall@pharmacy.example", channel="+49 30 1234567"
    )
    Tool.objects.filter(pk=tool.pk).update(
        owner=team, rag_description="USE WHEN: the clinician asks to prescribe a drug.\nDO NOT USE WHEN: a renewal."
    )
    for rule, severity in (("r1", "error"), ("r2", "warning"), ("r3", "warning")):
        Finding.objects.create(
            system="condor", tool=tool, rule=rule, severity=severity, message="m", revision=tool.last_changed_revision
        )
    req = runtime.suspend()
    others = [
        runtime.suspend(runId=f"run-{n}", args={"drug": f"d{n}", "patientId": req["patientRef"]}) for n in range(3)
    ]
    runtime.suspend(tool="createInvoiceDraft")  # billing: the approver may not see it, so it is not listed
    client = Client()
    client.force_login(approver)
    client.get("/approvals/")
    with django_assert_max_num_queries(7):
        body = client.get(f"/approvals/{req['id']}/").content.decode()
    context = body[
        body.index("data-context") : body.index("Approve with changes") if "Approve with changes" in body else None
    ]
    assert "the clinician asks to prescribe a drug." in body
    assert 'href="mailto:oncall@pharmacy.example"' in context and 'href="tel:+49301234567"' in context
    assert ">Pharmacy</a>" in context
    assert "error 1" in context and "warning 2" in context
    assert "signed off (revision" in context
    for other in others:
        assert f"/approvals/{other['id']}/" in context
    assert "createInvoiceDraft" not in context


def test_the_context_speaks_german(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    client = Client()
    client.force_login(approver)
    body = client.get(f"/approvals/{req['id']}/", headers={"Accept-Language": "de"}).content.decode()
    assert "Geltende Deklaration" in body and "Weitere offene Anfragen für diesen Patienten" in body
    assert ">offen</span>" in body  # the state word, not the stored `pending`


def test_history_filters_and_state_words_speak_german(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    client = Client()
    client.force_login(approver)
    client.post(f"/approvals/{req['id']}/decide", {"decision": "reject", "reason": "doppelt"})
    body = client.get("/approvals/history/", headers={"Accept-Language": "de"}).content.decode()
    assert '<option value="rejected">abgelehnt</option>' in body and "jede Stufe" in body
    assert ">abgelehnt</span>" in body and ">rejected</span>" not in body
    assert 'data-label="Entschieden von"' in body  # the phone's stacked rows name each value
