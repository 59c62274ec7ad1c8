"""What a clinical profile is served now, and since which sign-off, from the console (issue 40: "a safety officer
can answer what is clinical-production served right now, and since which sign-off, from one page and one API call,
and export it"): the revisions page says it per system, and links a download that is the effective-policy API's
answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from catalog.core import roles
from catalog.services.imports import catalog_import
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, sign_off

pytestmark = pytest.mark.django_db
TOOLS = [mutate_tool("prescribeMedication"), condor_tool("listActiveMedications")]


def _text(client: Client) -> str:
    page = client.get("/revisions/")
    assert page.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))


def test_the_revisions_page_says_since_which_sign_off_and_the_export_is_the_apis_answer(
    client: Client, make_user: Callable[..., Any], make_token: Callable[..., str]
) -> None:
    catalog_import(raw=encode(condor_manifest(TOOLS)), via="test")
    client.force_login(make_user("oscar", roles.ON_CALL))
    assert "condor : never approved: clinical profiles are served none of its tools" in _text(client)

    sign_off("condor")
    assert re.search(r"condor : since r1, signed off by officer-one, officer-two on \S", _text(client))
    lowered = [mutate_tool("prescribeMedication", hitlTier="low"), condor_tool("listActiveMedications")]
    catalog_import(raw=encode(condor_manifest(lowered)), via="test")  # weakening: waits
    assert re.search(r"condor : since r1, signed off by officer-one, officer-two", _text(client))

    export = client.get("/served/clinical-production.json")
    assert export.status_code == 200 and "attachment" in export["Content-Disposition"]
    served = json.loads(b"".join(export.streaming_content) if export.streaming else export.content)
    token = make_token("runtime-policy", scopes=("catalog:read",))
    api = Client().get(
        "/api/v1/catalog/policy", {"profile": "clinical-production"}, HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert served == api.json() and export["ETag"] == api["ETag"]
    assert served["signedOff"][0]["revision"] == 1
    prescribe = next(t for t in served["tools"] if t["declaredId"] == "prescribeMedication")
    assert (prescribe["hitlTier"], prescribe["awaitingSignoff"], prescribe["revisionInEffect"]) == ("high", True, 1)


def test_an_unknown_profile_is_not_found_and_a_visitor_signs_in_first(
    client: Client, make_user: Callable[..., Any]
) -> None:
    catalog_import(raw=encode(condor_manifest(TOOLS)), via="test")
    assert client.get("/served/clinical-production.json").status_code == 302
    client.force_login(make_user("oscar", roles.ON_CALL))
    assert client.get("/served/no-such-profile.json").status_code == 404
