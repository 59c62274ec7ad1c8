"""Safety findings from what ran, through the ingest service: each rule from spans, evidence gathered on one finding,
kept across imports, dropped by the retention."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from catalog.domain.rules import UNWAIVABLE_RULES
from catalog.domain.rules.runtime import OUTSIDE_CANDIDATE_SET, RETRIED_WRITE, STAMP_MISMATCH, UNAPPROVED_EXECUTION
from catalog.models import CandidateSet, Finding, ToolUsage
from catalog.services.imports import catalog_import
from catalog.usage import otlp
from catalog.usage.services.ingest import usage_ingest
from catalog.usage.services.retention import usage_compact
from tests.catalog.usage.spans import export, tool_span
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import


@pytest.fixture
def catalog(db: Any) -> None:
    signed_import(encode(condor_manifest()))


def ingest(*spans: Any) -> Any:
    return usage_ingest(list(otlp.spans(export(list(spans)))))


def findings(rule: str) -> list[Finding]:
    return list(Finding.objects.filter(rule=rule).select_related("tool"))


def test_a_write_run_twice_for_one_tool_call_is_one_finding_across_exports(catalog: None):
    ingest(tool_span("prescribeMedication", call_id="call-1", condor__profile="demo"))
    assert findings(RETRIED_WRITE) == []
    ingest(tool_span("prescribe_medication", call_id="call-1", condor__profile="demo", condor__retry__attempt=2))
    ingest(tool_span("prescribeMedication", call_id="call-1", condor__profile="demo"))
    [finding] = findings(RETRIED_WRITE)
    assert finding.tool.declared_id == "prescribeMedication" and finding.severity == "error"
    assert finding.details["occurrences"] == 2 and "ran 3 times for tool call 'call-1'" in finding.message
    assert RETRIED_WRITE in UNWAIVABLE_RULES
    # A read run twice is no retried write.
    ingest(tool_span("listActiveMedications", call_id="r"), tool_span("listActiveMedications", call_id="r"))
    assert len(findings(RETRIED_WRITE)) == 1
    assert ToolUsage.objects.get(tool__declared_id="prescribeMedication").retries == 1


def test_a_read_stamp_on_a_mutating_tool_is_the_seeds_ungated_policy_class(catalog: None):
    ingest(tool_span("prescribeMedication", condor__policy_class="read", condor__profile="demo"))
    [finding] = findings(STAMP_MISMATCH)
    assert "condor.policy_class stamped 'read', in effect 'mutate'" in finding.message
    ingest(
        tool_span(
            "prescribeMedication",
            condor__policy_class="mutate",
            condor__hitl_tier="high",
            condor__retry_class="none",
            condor__profile="demo",
        )
    )
    assert findings(STAMP_MISMATCH)[0].details["occurrences"] == 1  # a matching stamp adds no evidence


def test_a_tier_high_tool_run_under_a_clinical_profile_without_an_approval(catalog: None):
    ingest(tool_span("prescribeMedication", call_id="c9", condor__profile="clinical-production"))
    [finding] = findings(UNAPPROVED_EXECUTION)
    assert "is tier high and ran under profile 'clinical-production' for tool call 'c9'" in finding.message
    ingest(tool_span("prescribeMedication", call_id="c10", condor__profile="demo"))  # not clinical: fine
    ingest(tool_span("prescribeMedication", call_id="c11"))  # no profile named: judged clinical (fail closed)
    assert findings(UNAPPROVED_EXECUTION)[0].details["occurrences"] == 2


def test_a_business_tool_outside_the_resolved_candidate_set(catalog: None):
    CandidateSet.objects.create(
        set_id="cs_" + "a" * 32, system="condor", profile="demo", tool_keys=["list.active.medications"]
    )
    ingest(tool_span("listActiveMedications", condor__candidate_set_id="cs_" + "a" * 32))
    assert findings(OUTSIDE_CANDIDATE_SET) == []
    ingest(tool_span("prescribeMedication", condor__candidate_set_id="cs_" + "a" * 32, condor__profile="demo"))
    [finding] = findings(OUTSIDE_CANDIDATE_SET)
    assert finding.severity == "warning" and "was not in candidate set" in finding.message


def test_an_import_keeps_the_runtime_findings_and_relints_the_rest(catalog: None):
    ingest(tool_span("prescribeMedication", condor__policy_class="read", condor__profile="demo"))
    tools = [mutate_tool("prescribeMedication"), condor_tool("listActiveMedications"), condor_tool("listAllergies")]
    catalog_import(raw=encode(condor_manifest(tools)), via="test")
    assert len(findings(STAMP_MISMATCH)) == 1


def test_compaction_folds_old_minutes_into_hours_and_drops_what_expired(catalog: None, settings: Any):
    now = timezone.now()
    start = int((now - timedelta(hours=3)).timestamp() * 1e9)
    ingest(*[tool_span("listActiveMedications", start_ns=start + i * 60_000_000_000, ms=20) for i in range(5)])
    assert ToolUsage.objects.filter(resolution="m").count() == 5
    settings.CONDOR_USAGE_MINUTE_HOURS = 1
    done = usage_compact(now=now)
    assert done.minute_rows == 5
    hours = ToolUsage.objects.filter(resolution="h")
    assert sum(h.calls for h in hours) == 5 and not ToolUsage.objects.filter(resolution="m").exists()
    assert usage_compact(now=now).minute_rows == 0  # idempotent
    ingest(tool_span("prescribeMedication", condor__policy_class="read", condor__profile="demo"))
    usage_compact(now=now + timedelta(days=settings.CONDOR_USAGE_FINDING_DAYS + 1))
    assert findings(STAMP_MISMATCH) == [] and not ToolUsage.objects.exists()
