"""APPROVALS_DOMAIN_ALIASES: a catalog's domain (TUCAN: its category) decided by an approver domain (issue 23,
item 3). An unmapped domain stays its own; a bad value stops every process at boot."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client

from approvals.models import ApprovalRequest
from approvals.services.common import parse_aliases

from .conftest import PRESCRIPTION_ARGS, Runtime

pytestmark = pytest.mark.django_db


def test_parse_accepts_an_object_of_domains_and_names_every_problem() -> None:
    assert parse_aliases('{"prescriptions": "medication"}') == ({"prescriptions": "medication"}, [])
    assert parse_aliases({"Prescriptions": "medication"})[1][0].startswith("'Prescriptions': a domain is lower-case")
    assert parse_aliases("{not json")[1][0].startswith("not valid JSON")
    assert parse_aliases('["medication"]')[1] == ["must be a JSON object of domain → approver domain, not list"]
    assert "is itself mapped" in parse_aliases({"a": "b", "b": "c"})[1][0]
    assert parse_aliases({"labs": ""})[1] == [
        "labs: '' is not an approver domain (lower-case letters, digits, '.', '_', '-')"
    ]


def test_a_bad_value_fails_the_boot_check(settings: Any) -> None:
    settings.APPROVALS_DOMAIN_ALIASES = '{"prescriptions": 7}'
    errors = [m for m in run_checks(tags=["condor"]) if m.id == "approvals.E001"]
    assert len(errors) == 1 and "prescriptions: 7 is not an approver domain" in errors[0].msg
    with pytest.raises(SystemCheckError):
        call_command("check")


def test_the_default_maps_tucan_categories_onto_the_clinical_approver_domains() -> None:
    from django.conf import settings as django_settings

    # The shipped default (this test module's fixture resets the test setting, not the module's value).
    from condor_admin import settings as shipped

    assert parse_aliases(shipped.APPROVALS_DOMAIN_ALIASES)[1] == []
    aliases = parse_aliases(shipped.APPROVALS_DOMAIN_ALIASES)[0]
    assert aliases["prescriptions"] == "medication" and aliases["medications"] == "medication"
    assert aliases["appointments"] == "appointment"
    assert django_settings.APPROVALS_DOMAIN_ALIASES == {}  # tests/approvals/conftest.py: unmapped, as before


def test_a_mapped_tucan_request_goes_to_the_medication_approver(runtime: Runtime, approver: Any, settings: Any) -> None:
    settings.APPROVALS_DOMAIN_ALIASES = '{"prescriptions": "medication"}'
    req = runtime.suspend(tool="create-prescription", args=PRESCRIPTION_ARGS)
    assert req["policyDomain"] == "medication"
    client = Client()
    client.force_login(approver)  # approver:medication only
    page = client.get(f"/approvals/{req['id']}/").content.decode()
    assert "Approve with changes" in page
    form = {f"arg-{k}": v for k, v in PRESCRIPTION_ARGS.items()}
    client.post(
        f"/approvals/{req['id']}/decide",
        {**form, "arg-packSize": "N2", "edit": "1", "decision": "approve", "from": "detail"},
    )
    stored = ApprovalRequest.objects.get(pk=req["id"])
    assert stored.state == "approved" and stored.args_edited and stored.approved_args["packSize"] == "N2"


def test_an_unmapped_domain_stays_its_own(runtime: Runtime, approver: Any, settings: Any) -> None:
    settings.APPROVALS_DOMAIN_ALIASES = '{"prescriptions": "medication"}'
    req = runtime.suspend(tool="book-appointment", args={})
    assert req["policyDomain"] == "appointments"
    client = Client()
    client.force_login(approver)
    assert client.get(f"/approvals/{req['id']}/").status_code == 404
