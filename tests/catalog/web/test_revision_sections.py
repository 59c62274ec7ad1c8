"""The revision page names each profile and forced-floor change with its badge (issue 40: "shown on the revision
page with badges and diffs"): an officer sees that a clinical profile was widened and a forced floor dropped, and
that both wait for sign-off."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from catalog.core import roles
from catalog.services.imports import catalog_import
from tests.approvals.test_served_sections import INTAKE, _manifest
from tests.conftest import signed_import

pytestmark = pytest.mark.django_db


def test_a_widened_clinical_profile_and_a_dropped_floor_are_listed_as_weakening(
    client: Client, make_user: Callable[..., Any]
) -> None:
    signed_import(_manifest(night=[], floors=[INTAKE]))
    catalog_import(raw=_manifest(night=["production"], floors=[]), via="test")
    client.force_login(make_user("olga", roles.SAFETY_OFFICER))
    page = client.get("/revisions/condor/2/")
    assert page.status_code == 200
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert "clinical-night : availability + production weakening" in text, text
    assert "intake : removed weakening" in text, text
    assert "strengthening" not in text.split("Configuration changes", 1)[1].split("Before and after", 1)[0]
