"""The runtime's real OpenTelemetry SDK exporting GenAI `execute_tool` spans to a live console over OTLP/HTTP
(protobuf, and gzip), and what a person or service then reads: tool health, the unknown-names board, and each
runtime finding, judged from the spans alone (and, for an approval, from the real approvals API)."""

from __future__ import annotations

from typing import Any

from opentelemetry.exporter.otlp.proto.http import Compression

from approvals.services import approval_decide
from catalog.domain.rules.runtime import OUTSIDE_CANDIDATE_SET, RETRIED_WRITE, STAMP_MISMATCH, UNAPPROVED_EXECUTION
from catalog.models import CandidateSet, TelemetrySource, Tool, ToolUsage, UnknownToolName
from catalog.usage.selectors.health import tool_health

from .conftest import Console

PATIENT = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"
# What the runtime stamps on prescribeMedication when its declaration is read right (no finding).
RIGHT_STAMPS = {"policy_class": "mutate", "hitl_tier": "high", "retry_class": "none"}


def test_health_figures_come_from_the_sdks_export_protobuf_and_gzip(catalog: None, runtimes: Any) -> None:
    mastra = runtimes(service="mastra-runtime")
    zipped = runtimes(service="tucan-api", compression=Compression.Gzip)
    durations = [20.0] * 30 + [80.0] * 8 + [400.0] * 2
    with mastra.run():
        for i, ms in enumerate(durations):
            name = "list_active_medications" if i % 2 else "listActiveMedications"  # the LLM name counts too
            if i in (3, 17):
                mastra.call_tool(name, ms=ms, call_id=f"c{i}", error_type="timeout", profile="demo")
            elif i == 25:
                mastra.call_tool(name, ms=ms, call_id=f"c{i}", raises=ConnectionError("EHR unreachable"))
            else:
                mastra.call_tool(name, ms=ms, call_id=f"c{i}", profile="demo")
    with zipped.run():
        for i in range(10):
            zipped.call_tool("listActiveMedications", ms=20.0, error_type="timeout" if i == 0 else "")
    assert mastra.flush() and zipped.flush()
    assert mastra.exporter.spans_sent == 41 and zipped.exporter.spans_sent == 11  # with each run's invoke_agent

    tool = Tool.objects.get(declared_id="listActiveMedications")
    health = tool_health(tool.pk)
    assert (health.day.calls, health.day.errors, health.week.calls) == (50, 4, 50)
    # 40 calls of 20 ms, 8 of 80 ms, 2 of 400 ms: the median in the (10, 25] bucket, p95 in (75, 100].
    assert health.day.p50_ms is not None and 10 < health.day.p50_ms <= 25
    assert health.day.p95_ms is not None and 75 < health.day.p95_ms <= 100
    assert health.telemetry.active and health.last_call is not None
    assert len(health.executions) == 20  # the newest 20 kept
    errors: dict[str, int] = {}
    for row in ToolUsage.objects.filter(tool=tool):
        for kind, n in row.error_types.items():
            errors[kind] = errors.get(kind, 0) + n
    assert errors == {"timeout": 3, "_OTHER": 1}  # a raised exception without error.type: the SDK's status only
    sources = dict(TelemetrySource.objects.values_list("service", "spans"))
    assert sources == {"mastra-runtime": 40, "tucan-api": 10}  # invoke_agent spans are accepted, not counted
    assert TelemetrySource.objects.filter(rejected__gt=0).count() == 0


def test_a_hallucinated_name_is_on_the_board_with_the_real_tool_it_meant(
    catalog: None, runtimes: Any, console: Console
) -> None:
    runtime = runtimes(service="tucan-api")
    with runtime.run("clinical"):
        for i in range(3):
            runtime.call_tool("get_clinical_notes", call_id=f"n{i}", agent="clinical", error_type="tool_not_found")
        runtime.call_tool("list_clinical_notes", agent="clinical")  # the real tool by its LLM name
    assert runtime.flush()

    board = console.get("/api/v1/usage/unknown-names")
    assert board["count"] == 1
    [item] = board["items"]
    assert (item["name"], item["source"], item["calls"]) == ("get_clinical_notes", "call", 3)
    assert (item["services"], item["agents"], item["verdict"]) == (["tucan-api"], ["clinical"], "open")
    assert (item["closest"]["system"], item["closest"]["toolId"]) == ("tucan", "list-clinical-notes")
    assert item["closest"]["score"] >= 60
    notes = Tool.objects.get(system="tucan", declared_id="list-clinical-notes")
    assert tool_health(notes.pk).day.calls == 1
    assert not UnknownToolName.objects.filter(name__in=["list_clinical_notes", "list-clinical-notes"]).exists()


def test_a_write_retried_for_one_tool_call_and_a_read_stamp_on_a_write_are_findings(
    catalog: None, runtimes: Any, console: Console
) -> None:
    runtime = runtimes()
    with runtime.run():
        first = runtime.call_tool("prescribeMedication", call_id="call-rx-1", profile="demo", **RIGHT_STAMPS)
    assert runtime.flush()
    assert console.findings(RETRIED_WRITE) == []
    with runtime.run():  # the runtime timed out, retried the write in a new export, and it ran again
        retry = runtime.call_tool(
            "prescribeMedication", call_id="call-rx-1", profile="demo", retry__attempt=2, **RIGHT_STAMPS
        )
        # The seed's defect: a mutating tool stamped `read` at the suspend gate.
        stamped = runtime.call_tool("prescribe_medication", call_id="call-rx-2", profile="demo", policy_class="read")
    assert runtime.flush()

    [retried] = console.findings(RETRIED_WRITE)
    assert (retried["tool"], retried["severity"], retried["waived"]) == ("prescribeMedication", "error", False)
    assert "ran 2 times for tool call 'call-rx-1'" in retried["message"]
    assert retried["details"]["occurrences"] == 1
    assert retried["details"]["examples"][0]["toolCallId"] == "call-rx-1"
    assert retried["details"]["examples"][0]["traceId"] == retry != first
    [mismatch] = console.findings(STAMP_MISMATCH)
    assert mismatch["tool"] == "prescribeMedication" and mismatch["severity"] == "error"
    assert "condor.policy_class stamped 'read', in effect 'mutate'" in mismatch["message"]
    assert mismatch["details"]["occurrences"] == 1  # the right stamps added no evidence
    assert mismatch["details"]["examples"][0]["traceId"] == stamped
    assert console.findings(UNAPPROVED_EXECUTION) == []  # `demo` is not a clinical profile
    assert ToolUsage.objects.get(tool__declared_id="prescribeMedication").retries == 1


def approve_through_the_api(console: Console, approver: Any, tool_call_id: str) -> dict[str, Any]:
    """The runtime asks (evaluate, naming its tool call), an approver approves, the runtime consumes."""
    answer = console.post(
        "/api/v1/approvals/evaluate",
        {
            "tool": "prescribeMedication",
            "profile": "clinical-production",
            "dispatchMode": "supervised",
            "runId": "run-7",
            "requestedBy": "dr.house",
            "patientRef": PATIENT,
            "args": {"patientId": PATIENT, "drug": "amoxicillin", "dose": "500 mg"},
            "idempotencyKey": f"key-{tool_call_id}",
            "toolCallId": tool_call_id,
        },
        "approvals",
        expect=201,
    )
    assert answer["decision"] == "suspend", answer
    request = answer["request"]
    approval_decide(request_id=request["id"], approver=approver, decision="approve", reason="dose checked")
    body = {"argsSha256": request["argsSha256"], "toolCallId": tool_call_id}
    consumed = console.post(f"/api/v1/approvals/{request['id']}/consume", body, "approvals")
    assert consumed["state"] == "consumed"
    return dict(consumed)


def test_a_tier_high_write_under_the_clinical_profile_needs_a_consumed_approval_for_its_call(
    catalog: None, runtimes: Any, console: Console, make_user: Any
) -> None:
    approver = make_user("anna", "approver", "approver:medication", email="anna@example.org")
    approve_through_the_api(console, approver, "call-approved")
    runtime = runtimes()
    with runtime.run():
        runtime.call_tool("prescribeMedication", call_id="call-approved", profile="clinical-production", **RIGHT_STAMPS)
    assert runtime.flush()
    assert console.findings(UNAPPROVED_EXECUTION) == []  # the control: approved and consumed for this very call

    with runtime.run():
        unapproved = runtime.call_tool(
            "prescribeMedication", call_id="call-unapproved", profile="clinical-production", **RIGHT_STAMPS
        )
        runtime.call_tool("prescribeMedication", call_id="call-approved-2", profile="demo", **RIGHT_STAMPS)
    assert runtime.flush()
    [finding] = console.findings(UNAPPROVED_EXECUTION)
    assert finding["tool"] == "prescribeMedication" and finding["severity"] == "error"
    said = "is tier high and ran under profile 'clinical-production' for tool call 'call-unapproved'"
    assert said in finding["message"]
    assert finding["details"]["occurrences"] == 1  # neither the approved call nor the demo one counts
    assert finding["details"]["examples"][0]["traceId"] == unapproved
    assert console.findings(STAMP_MISMATCH) == [] and console.findings(RETRIED_WRITE) == []


def test_a_business_tool_outside_the_candidate_set_its_run_was_resolved_with(
    catalog: None, runtimes: Any, console: Console
) -> None:
    snapshot = console.post(
        "/api/v1/rag/resolve", {"prompt": "list the active medications", "profile": "demo", "topK": 1}, "rag"
    )
    set_id, offered = snapshot["candidateSetId"], snapshot["toolIds"]
    assert offered == ["list.active.medications"] and set_id.startswith("cs_")
    kept = CandidateSet.objects.get(set_id=set_id)  # resolve keeps what it served
    assert (kept.profile, kept.tool_keys) == ("demo", offered)
    runtime = runtimes()
    with runtime.run():
        runtime.call_tool("listActiveMedications", candidate_set_id=set_id, profile="demo")
        outside = runtime.call_tool(
            "prescribeMedication", call_id="rx-9", candidate_set_id=set_id, profile="demo", **RIGHT_STAMPS
        )
    assert runtime.flush()
    [finding] = console.findings(OUTSIDE_CANDIDATE_SET)
    assert (finding["tool"], finding["severity"]) == ("prescribeMedication", "warning")
    assert f"was not in candidate set {set_id} (1 tools)" in finding["message"]
    assert finding["details"]["examples"][0]["traceId"] == outside
