"""The boot gate: a clinical profile with a non-production tool active refuses to start."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Error, Warning, run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from catalog.models import CatalogProfile
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db


def condor_messages() -> list[Any]:
    return [m for m in run_checks(tags=["condor"]) if m.id and m.id.startswith("condor.")]


@pytest.fixture
def imported(manifests: Any) -> None:
    tools = [
        manifests.condor_tool("listActiveMedications"),
        manifests.condor_tool("generateDemoPatient", availability="demo-only"),
        manifests.condor_tool("previewCard", availability="preview"),
    ]
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[])), via="test")


def test_no_active_profile_no_gate(imported: None, settings: Any) -> None:
    settings.CONDOR_ACTIVE_PROFILE = ""
    assert condor_messages() == []


def test_clinical_profile_with_only_production_active_passes(imported: None, settings: Any) -> None:
    settings.CONDOR_ACTIVE_PROFILE = "clinical-production"
    assert condor_messages() == []


def test_non_clinical_profile_may_activate_demo_tools(imported: None, settings: Any) -> None:
    settings.CONDOR_ACTIVE_PROFILE = "demo"
    assert condor_messages() == []


def test_clinical_profile_with_a_demo_tool_active_is_an_error(imported: None, settings: Any) -> None:
    # Nothing a manifest can do (the importer refuses it), so the row is edited behind its back.
    CatalogProfile.objects.filter(slug="clinical-production").update(includes=["generateDemoPatient"])
    settings.CONDOR_ACTIVE_PROFILE = "clinical-production"
    (message,) = condor_messages()
    assert isinstance(message, Error) and message.id == "condor.E001"
    assert "condor:generateDemoPatient" in message.msg
    with pytest.raises(SystemCheckError, match="generateDemoPatient"):
        call_command("check")


def test_clinical_profile_activating_preview_is_an_error(imported: None, settings: Any) -> None:
    CatalogProfile.objects.filter(slug="clinical-production").update(availabilities=["production", "preview"])
    settings.CONDOR_ACTIVE_PROFILE = "clinical-production"
    (message,) = condor_messages()
    assert message.id == "condor.E001" and "condor:previewCard" in message.msg


def test_unknown_profile_is_a_warning_so_a_fresh_database_can_migrate(imported: None, settings: Any) -> None:
    settings.CONDOR_ACTIVE_PROFILE = "clinical-staging"
    (message,) = condor_messages()
    assert isinstance(message, Warning) and message.id == "condor.W001"
