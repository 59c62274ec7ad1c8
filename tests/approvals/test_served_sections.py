"""Profiles and forced floors are governed (issue 40's rows: a manifest dropped the clinical-intake forced floor and
resolve on a multi-entity intake no longer led with it; a profile widened by import alone). Through the runtime's
API: resolve, evaluate and the policy API. Until sign-off a clinical profile is served the narrower of the signed-off
and the imported profile, and every profile the union of the forced floors; the stricter part is served at once."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.test import Client

from catalog.models import CatalogRevision
from tests.approvals.conftest import Runtime
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, sign_off, signed_import

pytestmark = pytest.mark.django_db
IMPORT, RESOLVE = "/api/v1/catalog/revisions", "/api/v1/rag/resolve"
_calls = itertools.count(1)
INTAKE = {"id": "intake", "trigger": "multi-entity-intake", "tools": ["listActiveMedications", "listAllergies"]}
TOOLS = [
    mutate_tool("bookAppointment", module="appointment", policyDomain="appointment", hitlTier="low"),
    condor_tool("listActiveMedications"),
    condor_tool("listAllergies"),
]


def _profiles(night: list[str]) -> list[dict[str, Any]]:
    return [
        {"id": "clinical-production", "clinical": True, "availability": ["production"], "include": []},
        {"id": "clinical-night", "clinical": True, "availability": night, "include": []},
        {"id": "demo", "clinical": False, "availability": ["production", "preview", "demo-only"]},
    ]


def _manifest(*, night: list[str], floors: list[dict[str, Any]]) -> bytes:
    return encode(condor_manifest(TOOLS, profiles=_profiles(night), forcedFloors=floors, baselineCount=3))


@pytest.fixture
def api(client: Client, make_token: Any) -> dict[str, dict[str, str]]:
    return {
        scope: {"Authorization": f"Bearer {make_token(scope, scopes=(scope,))}"}
        for scope in ("catalog:write", "catalog:read", "rag", "approvals")
    }


def _import(client: Client, api: dict[str, dict[str, str]], raw: bytes) -> CatalogRevision:
    answer = client.post(IMPORT, data=raw, content_type="application/json", headers=api["catalog:write"])
    assert answer.status_code in (200, 201), answer.content
    return CatalogRevision.objects.filter(system="condor").latest("number")


def _forced(
    client: Client,
    api: dict[str, dict[str, str]],
    profile: str = "clinical-production",
    *,
    intake: bool = True,
    attachments: bool = False,
) -> list[str]:
    body = {
        "prompt": "new patient intake",
        "profile": profile,
        "multiEntityIntake": intake,
        "attachments": attachments,
        "topK": 1,
    }
    answer = client.post(RESOLVE, body, content_type="application/json", headers=api["rag"])
    assert answer.status_code == 200, answer.content
    reasons = answer.json()["activationReasons"]
    return [tool for tool in answer.json()["toolIds"] if "forced-floor:intake" in reasons[tool]]


def _eligible(client: Client, api: dict[str, dict[str, str]], profile: str) -> bool:
    url = "/api/v1/catalog/tools/condor/bookAppointment/policy"
    answer = client.get(url, {"profile": profile}, headers=api["catalog:read"])
    assert answer.status_code == 200, answer.content
    return bool(answer.json()["planEligible"])


def _call(client: Client, api: dict[str, dict[str, str]], profile: str) -> Any:
    runtime = Runtime(client, api["approvals"]["Authorization"].removeprefix("Bearer "))
    return runtime.evaluate(tool="bookAppointment", profile=profile, dispatchMode="operator", args={"n": next(_calls)})


def test_a_dropped_forced_floor_keeps_forcing_its_tools_until_sign_off(client: Client, api: Any) -> None:
    signed_import(_manifest(night=["production"], floors=[INTAKE]))
    assert _forced(client, api) == ["list.active.medications", "list.allergies"]

    revision = _import(client, api, _manifest(night=["production"], floors=[]))
    assert revision.review_state == "pending-review"
    assert _forced(client, api) == ["list.active.medications", "list.allergies"]
    assert _forced(client, api, "demo") == ["list.active.medications", "list.allergies"]  # fail closed: every profile

    sign_off("condor")
    assert _forced(client, api) == []


def test_a_tool_added_to_a_forced_floor_is_forced_at_once(client: Client, api: Any) -> None:
    signed_import(_manifest(night=["production"], floors=[{**INTAKE, "tools": ["listAllergies"]}]))
    _import(client, api, _manifest(night=["production"], floors=[INTAKE]))
    assert _forced(client, api) == ["list.active.medications", "list.allergies"]


def test_a_forced_floor_moved_to_another_trigger_fires_on_both_until_sign_off(client: Client, api: Any) -> None:
    signed_import(_manifest(night=["production"], floors=[INTAKE]))
    _import(client, api, _manifest(night=["production"], floors=[{**INTAKE, "trigger": "attachments"}]))
    both = ["list.active.medications", "list.allergies"]
    assert _forced(client, api) == both  # the signed-off trigger still fires
    assert _forced(client, api, intake=False, attachments=True) == both  # the new one at once

    sign_off("condor")
    assert _forced(client, api) == []
    assert _forced(client, api, intake=False, attachments=True) == both


def test_a_widened_clinical_profile_waits_and_a_narrowed_one_is_served_at_once(client: Client, api: Any) -> None:
    signed_import(_manifest(night=[], floors=[INTAKE]))
    assert not _eligible(client, api, "clinical-night")

    revision = _import(client, api, _manifest(night=["production"], floors=[INTAKE]))
    assert revision.review_state == "pending-review"
    assert not _eligible(client, api, "clinical-night")
    refused = _call(client, api, "clinical-night")
    assert refused.status_code == 422 and refused.json()["reason"] == "not-plan-eligible", refused.content
    assert _call(client, api, "clinical-production").json()["decision"] == "allow"

    sign_off("condor")
    assert _eligible(client, api, "clinical-night")
    assert _call(client, api, "clinical-night").json()["decision"] == "allow"

    # Narrowing is stricter: served at the import, before anyone signs off.
    _import(client, api, _manifest(night=[], floors=[INTAKE]))
    assert not _eligible(client, api, "clinical-night")
    assert _call(client, api, "clinical-night").status_code == 422
