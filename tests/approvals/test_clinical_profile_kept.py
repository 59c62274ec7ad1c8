"""An import cannot switch the gate off: a clinical profile stays clinical and stays (issue 40's first row: a
manifest declaring clinical-production non-clinical, with a new mutating tool, was served `allow` at once)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import Client

from catalog.domain.profiles import clinical_profile_problems
from catalog.models import CatalogProfile, CatalogRevision
from tests.approvals.conftest import Runtime
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import

pytestmark = pytest.mark.django_db
URL = "/api/v1/catalog/revisions"


def test_the_rule_names_each_weakened_clinical_profile_where_it_is() -> None:
    assert clinical_profile_problems({"clinical-production"}, [("clinical-production", True), ("demo", False)]) == []
    flipped = clinical_profile_problems({"clinical-production"}, [("demo", False), ("clinical-production", False)])
    assert len(flipped) == 1 and flipped[0].startswith("profiles[1].clinical: clinical-production is a clinical")
    dropped = clinical_profile_problems({"clinical-production", "icu"}, [("clinical-production", True)])
    assert dropped == [
        "profiles: the clinical profile icu is missing; an import cannot remove a clinical profile (declare it again)"
    ]
    assert clinical_profile_problems(set(), [("new-clinical", False)]) == []  # nothing clinical stored yet


def test_a_manifest_cannot_make_the_clinical_profile_non_clinical_nor_drop_it(
    client: Client, make_token: Any, settings: Any
) -> None:
    tools = [mutate_tool("prescribeMedication"), condor_tool("listActiveMedications")]
    signed_import(encode(condor_manifest(tools)))
    writer = {"Authorization": f"Bearer {make_token('ci', scopes=('catalog:write',))}"}
    runtime = Runtime(client, make_token("runtime", scopes=("approvals",), owner=None))
    hostile = condor_manifest([*tools, mutate_tool("dischargePatient", hitlTier="high")])
    hostile["profiles"][0]["clinical"] = False
    answer = client.post(URL, data=encode(hostile), content_type="application/json", headers=writer)
    assert answer.status_code == 422, answer.content
    assert answer.json()["errors"] == [
        "profiles[0].clinical: clinical-production is a clinical profile; an import cannot make it non-clinical "
        "(declare clinical: true, or remove it from the source with a safety officer's decision)"
    ]
    dropped = condor_manifest(tools, profiles=[{"id": "demo", "clinical": False, "availability": ["production"]}])
    answer = client.post(URL, data=encode(dropped), content_type="application/json", headers=writer)
    assert (
        answer.status_code == 422 and "the clinical profile clinical-production is missing" in answer.content.decode()
    )
    # Nothing changed: the profile is clinical, no revision was added, the new tool does not exist for the runtime.
    assert CatalogProfile.objects.get(slug="clinical-production").clinical
    assert CatalogRevision.objects.filter(system="condor").count() == 1
    refused = runtime.evaluate(tool="dischargePatient")
    assert refused.status_code == 422 and refused.json()["reason"] == "unknown-tool", refused.content
    # ...and the boot gate still reads a clinical profile.
    settings.CONDOR_ACTIVE_PROFILE = "clinical-production"
    assert not [m for m in run_checks() if m.id == "condor.E001"]
