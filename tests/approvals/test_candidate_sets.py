"""A call that names its candidate set (`candidateSetId`, as POST /api/v1/rag/resolve served it) may only call a
tool of that set, under the profile it was served for; a set the console does not know vouches for nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from approvals.domain import ServedSet, candidate_set_id_problem, candidate_set_refusal
from approvals.models import ApprovalRequest
from approvals.selectors import candidate_set_get
from catalog.models import AuditEvent, CandidateSet

from .conftest import Runtime

pytestmark = pytest.mark.django_db
SET_ID = "cs_" + "0123456789abcdef" * 2


def served(
    keys: list[str],
    *,
    set_id: str = SET_ID,
    profile: str = "clinical-production",
    system: str = "condor",
    age: Any = None,
) -> CandidateSet:
    at = timezone.now() - (age or timedelta(0))
    return CandidateSet.objects.create(
        set_id=set_id, system=system, profile=profile, tool_keys=keys, created_at=at, last_served_at=at
    )


def nothing_written() -> bool:
    return not ApprovalRequest.objects.exists() and not AuditEvent.objects.filter(object_type="approvals.request")


def test_a_tool_of_the_set_suspends_and_the_request_keeps_the_set(runtime: Runtime) -> None:
    served(["list.active.medications", "prescribe.medication"])
    response = runtime.evaluate(candidateSetId=SET_ID)
    assert response.status_code == 201, response.content
    assert response.json()["request"]["candidateSetId"] == SET_ID
    assert ApprovalRequest.objects.get().candidate_set_id == SET_ID
    assert AuditEvent.objects.get(action="approvals.request.suspended").after["candidate_set_id"] == SET_ID


def test_without_a_set_nothing_is_checked_and_the_request_names_none(runtime: Runtime) -> None:
    response = runtime.evaluate()
    assert response.status_code == 201 and response.json()["request"]["candidateSetId"] is None


def test_a_set_never_served_is_refused_and_says_to_resolve_again(runtime: Runtime) -> None:
    response = runtime.evaluate(candidateSetId=SET_ID)
    assert response.status_code == 422
    body = response.json()
    assert (body["decision"], body["reason"]) == ("refuse", "unknown-candidate-set")
    assert f"candidate set {SET_ID} was never served" in body["detail"] and "resolve the turn again" in body["detail"]
    assert nothing_written()


def test_a_set_no_longer_kept_is_unknown_even_before_the_beat_prunes_it(runtime: Runtime, settings: Any) -> None:
    served(["prescribe.medication"], age=timedelta(hours=settings.CONDOR_USAGE_CANDIDATE_SET_HOURS, minutes=1))
    response = runtime.evaluate(candidateSetId=SET_ID)
    assert response.status_code == 422 and response.json()["reason"] == "unknown-candidate-set"
    assert nothing_written()


def test_a_set_served_for_another_profile_is_refused(runtime: Runtime) -> None:
    served(["prescribe.medication"], profile="demo")
    response = runtime.evaluate(candidateSetId=SET_ID)
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "candidate-set-profile-mismatch"
    assert body["detail"].startswith(f"candidate set {SET_ID} was served for profile demo, not clinical-production")
    assert nothing_written()


@pytest.mark.parametrize("tool", ["createInvoiceDraft", "listActiveMedications"])
def test_a_tool_outside_the_set_is_refused_naming_the_tool_and_the_set(runtime: Runtime, tool: str) -> None:
    served(["prescribe.medication"])
    response = runtime.evaluate(tool=tool, candidateSetId=SET_ID)
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "not-in-candidate-set"
    assert body["detail"].startswith(f"condor:{tool} is not in candidate set {SET_ID} (1 tools of condor)")
    assert nothing_written()


def test_the_set_is_checked_against_the_tool_the_gate_found_not_the_spelling(runtime: Runtime) -> None:
    served(["prescribe.medication"])
    # An alias (medication.prescribe) names prescribeMedication: in the set.
    assert runtime.evaluate(tool="medication.prescribe", candidateSetId=SET_ID).status_code == 201


def test_the_sets_system_chooses_between_tools_of_both_catalogs(runtime: Runtime) -> None:
    served(["book.appointment"], system="tucan")
    response = runtime.evaluate(tool="book.appointment", args={}, candidateSetId=SET_ID)
    assert response.status_code == 201, response.content
    assert response.json()["request"]["tool"] == {
        "system": "tucan",
        "id": "book-appointment",
        "canonicalKey": "book.appointment",
        "llmName": "book_appointment",
    }


def test_a_tool_of_another_system_with_a_key_in_the_set_is_refused(runtime: Runtime) -> None:
    served(["book.appointment"], system="tucan")
    response = runtime.evaluate(tool="bookAppointment", system="condor", args={}, candidateSetId=SET_ID)
    assert response.status_code == 422 and response.json()["reason"] == "not-in-candidate-set"


@pytest.mark.parametrize("bad", ["", "cs_123", "CS_" + "0" * 32, "cs_" + "A" * 32, "cs_" + "g" * 32, "cs-" + "0" * 32])
def test_a_candidate_set_id_of_the_wrong_shape_is_a_422_saying_what_it_looks_like(runtime: Runtime, bad: str) -> None:
    response = runtime.evaluate(candidateSetId=bad)
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "invalid-candidate-set-id"
    assert body["detail"].startswith("candidateSetId: ") and "`cs_` and 32 lower-case hex digits" in body["detail"]
    assert nothing_written()


def test_a_candidate_set_id_over_its_bound_is_refused_by_the_schema(runtime: Runtime) -> None:
    response = runtime.evaluate(candidateSetId="cs_" + "0" * 38)
    assert response.status_code == 422 and "candidateSetId" in response.content.decode()
    assert nothing_written()


def test_the_openapi_document_states_the_bounds(client: Any) -> None:
    schema = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    evaluate = schema["EvaluateIn"]["properties"]
    assert evaluate["candidateSetId"]["pattern"] == "^cs_[0-9a-f]{32}$"
    assert evaluate["candidateSetId"]["anyOf"][0]["maxLength"] == 40
    assert evaluate["toolCallId"]["anyOf"][0]["maxLength"] == 200
    assert schema["ConsumeIn"]["properties"]["toolCallId"]["anyOf"][0]["maxLength"] == 200
    out = schema["RequestOut"]["properties"]
    assert {"toolCallId", "candidateSetId", "duplicateOf"} <= set(out)


def test_the_set_is_read_in_one_query(db: None, django_assert_num_queries: Any) -> None:
    served(["prescribe.medication", "list.vitals"])
    with django_assert_num_queries(1):
        found = candidate_set_get(SET_ID, now=timezone.now())
    assert found == ServedSet(
        SET_ID, "condor", "clinical-production", frozenset({"prescribe.medication", "list.vitals"})
    )
    with django_assert_num_queries(1):
        assert candidate_set_get("cs_" + "f" * 32, now=timezone.now()) is None


# --- the rule, as plain values -----------------------------------------------------------------------


def test_the_rule_over_plain_values() -> None:
    kept = ServedSet(SET_ID, "condor", "p", frozenset({"a.b"}))
    check = {"set_id": SET_ID, "profile": "p", "tool_system": "condor", "tool_key": "a.b", "tool": "condor:aB"}
    assert candidate_set_refusal(served=kept, **check) is None
    assert candidate_set_refusal(served=None, **check).reason == "unknown-candidate-set"  # type: ignore[union-attr]
    assert candidate_set_refusal(served=kept, **{**check, "profile": "q"}).reason == "candidate-set-profile-mismatch"  # type: ignore[union-attr]
    assert candidate_set_refusal(served=kept, **{**check, "tool_key": "c"}).reason == "not-in-candidate-set"  # type: ignore[union-attr]
    assert candidate_set_refusal(served=kept, **{**check, "tool_system": "tucan"}).reason == "not-in-candidate-set"  # type: ignore[union-attr]
    assert candidate_set_id_problem(SET_ID) is None
    assert candidate_set_id_problem(SET_ID + "\n") is not None  # `$` would let a trailing newline through
