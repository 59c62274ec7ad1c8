"""What routes a name to a tool, and what a floor or an approver route is derived from, is governed (issue 40's
rows: an alias added to a write tool, a removed tool's name given to a read tool, a mutating tool's module changed
under a floor). Through the runtime's own API: under a clinical profile nothing weaker is served before the safety
officers sign off, the strengthening part of the same change is served at once, and the non-clinical profile sees
the newest import as before."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.test import Client

from catalog.models import CatalogRevision, TierFloor, ToolChange, ToolUsage, UnknownToolName
from tests.approvals.conftest import Runtime, condor_catalog, condor_tools
from tests.catalog.usage.spans import as_protobuf, export, tool_span
from tests.conftest import sign_off, signed_import

pytestmark = pytest.mark.django_db
IMPORT, OTLP = "/api/v1/catalog/revisions", "/api/v1/otlp/v1/traces"
_calls = itertools.count(1)


@pytest.fixture
def writer(make_token: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {make_token('ci', scopes=('catalog:write',))}"}


@pytest.fixture
def reader(make_token: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {make_token('reader', scopes=('catalog:read',))}"}


def _import(client: Client, writer: dict[str, str], raw: bytes) -> CatalogRevision:
    answer = client.post(IMPORT, data=raw, content_type="application/json", headers=writer)
    assert answer.status_code in (200, 201), answer.content
    return CatalogRevision.objects.filter(system="condor").latest("number")


def _policy(client: Client, reader: dict[str, str], tool: str, profile: str = "clinical-production") -> dict[str, Any]:
    answer = client.get(f"/api/v1/catalog/tools/condor/{tool}/policy", {"profile": profile}, headers=reader)
    assert answer.status_code == 200, answer.content
    return answer.json()


def _call(runtime: Runtime, tool: str, profile: str = "clinical-production") -> Any:
    """One call in operator mode, with arguments no earlier call had (the same arguments again are held as a
    possible duplicate)."""
    return runtime.evaluate(tool=tool, profile=profile, dispatchMode="operator", args={"call": next(_calls)})


def _tool(tools: list[dict[str, Any]], tool_id: str) -> dict[str, Any]:
    return next(t for t in tools if t["id"] == tool_id)


def test_an_alias_added_to_a_write_tool_routes_nothing_clinical_until_sign_off(
    runtime: Runtime, client: Client, writer: dict[str, str], reader: dict[str, str], manifests: Any
) -> None:
    tools = condor_tools(manifests)
    _tool(tools, "bookAppointment")["aliases"] = ["prescribe_now"]
    revision = _import(client, writer, condor_catalog(manifests, tools))

    assert revision.review_state == "pending-review"  # an officer sees it; not approved by itself
    change = ToolChange.objects.get(revision=revision, declared_id="bookAppointment")
    assert change.classes == {"aliases": "weakening"} and change.weakening and "aliases" in change.safety_fields
    refused = _call(runtime, "prescribe_now")
    assert refused.status_code == 422 and refused.json()["reason"] == "unknown-tool", refused.content
    # The declared id still works, and the staging profile sees the new spelling at once.
    assert _call(runtime, "bookAppointment").json()["decision"] == "allow"
    staged = _call(runtime, "prescribe_now", "demo")
    assert staged.status_code == 200 and staged.json()["decision"] == "allow", staged.content

    sign_off("condor")
    signed = _call(runtime, "prescribe_now")
    assert signed.status_code == 200 and signed.json()["decision"] == "allow", signed.content


def test_telemetry_counts_a_call_by_an_unsigned_alias_as_an_unknown_name_under_a_clinical_profile(
    client: Client, writer: dict[str, str], manifests: Any, make_token: Any
) -> None:
    """The telemetry ingest routes names as the gate does: a clinical runtime that calls a spelling not yet signed
    off called no tool (an unknown name for the owners to judge), a staging runtime called the tool."""
    tools = condor_tools(manifests)
    _tool(tools, "bookAppointment")["aliases"] = ["prescribe_now"]
    _import(client, writer, condor_catalog(manifests, tools))
    telemetry = {"Authorization": f"Bearer {make_token('runtime-telemetry', scopes=('telemetry',))}"}

    def report(profile: str) -> None:
        body = as_protobuf(export([tool_span("prescribe_now", condor__profile=profile, condor__system="condor")]))
        answer = client.post(OTLP, data=body, content_type="application/x-protobuf", headers=telemetry)
        assert answer.status_code == 200, answer.content

    report("clinical-production")
    assert list(UnknownToolName.objects.values_list("name", flat=True)) == ["prescribe_now"]
    assert not ToolUsage.objects.exists()
    report("demo")
    assert ToolUsage.objects.get().tool.declared_id == "bookAppointment"

    sign_off("condor")
    report("clinical-production")
    assert ToolUsage.objects.get().calls == 2 and UnknownToolName.objects.count() == 1


def test_a_removed_tools_name_given_to_a_read_tool_is_not_served_and_an_officer_sees_it(
    runtime: Runtime, client: Client, writer: dict[str, str], reader: dict[str, str], manifests: Any
) -> None:
    tools = [t for t in condor_tools(manifests) if t["id"] != "prescribeMedication"]
    _tool(tools, "listActiveMedications")["aliases"] = ["medication.prescribe"]
    revision = _import(client, writer, condor_catalog(manifests, tools))

    assert revision.review_state == "pending-review"
    for spelling in ("medication.prescribe", "prescribeMedication"):
        refused = _call(runtime, spelling)
        assert refused.status_code == 422 and refused.json()["reason"] == "unknown-tool", (spelling, refused.content)
    policy = _policy(client, reader, "listActiveMedications")
    assert policy["awaitingSignoff"] is True and policy["inEffect"] is True
    staged = _call(runtime, "medication.prescribe", "demo")
    assert staged.status_code == 200 and staged.json()["decision"] == "allow", staged.content


def test_a_write_tools_module_moved_out_of_a_floor_keeps_the_floor_and_the_approvers_until_sign_off(
    runtime: Runtime, client: Client, writer: dict[str, str], reader: dict[str, str], manifests: Any
) -> None:
    # releaseOrder declares tier low and no policy domain: its approval domain is its module, `medication`, which a
    # floor holds at high. noteDraft (module `notes`, low) has no floor.
    base = condor_tools(manifests)
    for tool_id, module in (("releaseOrder", "medication"), ("noteDraft", "notes")):
        base.append(manifests.mutate_tool(tool_id, module=module, policyDomain=None, hitlTier="low"))
    signed_import(condor_catalog(manifests, base))
    assert TierFloor.objects.filter(policy_domain="medication", min_tier="high").exists()  # seeded by a migration
    held = _call(runtime, "releaseOrder")
    assert held.status_code == 201 and held.json()["request"]["policyDomain"] == "medication", held.content

    moved = manifests.copy(base)
    _tool(moved, "releaseOrder")["module"] = "scheduling"  # out of the floor: weakening
    _tool(moved, "noteDraft")["module"] = "medication"  # into it: strengthening, served at once
    revision = _import(client, writer, condor_catalog(manifests, moved))
    assert revision.review_state == "pending-review"

    still = _call(runtime, "releaseOrder")
    assert still.status_code == 201 and still.json()["reason"] == "tier-high", still.content
    assert still.json()["request"]["policyDomain"] == "medication"  # the same approver group
    policy = _policy(client, reader, "releaseOrder")
    assert (policy["hitlTier"], policy["floors"], policy["awaitingSignoff"]) == ("high", ["domain:medication"], True)
    raised = _call(runtime, "noteDraft")
    assert raised.status_code == 201 and raised.json()["reason"] == "tier-high", raised.content
    assert _policy(client, reader, "noteDraft")["floors"] == ["domain:medication"]
    # Staging is served the newest import: releaseOrder low and allowed.
    staged = _call(runtime, "releaseOrder", "demo")
    assert staged.status_code == 200 and staged.json()["decision"] == "allow", staged.content
    assert _policy(client, reader, "releaseOrder", profile="demo")["hitlTier"] == "low"

    sign_off("condor")
    after = _call(runtime, "releaseOrder")
    assert after.status_code == 200 and after.json()["decision"] == "allow", after.content
    assert _policy(client, reader, "releaseOrder")["floors"] == []
