"""GET /api/v1/catalog/policy and /api/v1/catalog/tools/{system}/{id}/policy: what the runtime may do."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.core import roles
from catalog.services.imports import catalog_import
from tests.conftest import sign_off

pytestmark = pytest.mark.django_db
URL = "/api/v1/catalog/policy"


@pytest.fixture
def api(make_token: Any) -> Any:
    token = make_token("runtime-policy", scopes=("catalog:read",))
    client = Client()

    def get(path: str = URL, expect: int = 200, etag: str | None = None, **params: Any) -> Any:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
        if etag:
            headers["HTTP_IF_NONE_MATCH"] = etag
        response = client.get(path, params, **headers)
        assert response.status_code == expect, response.content
        return response

    return get


def _catalog(manifests: Any, **prescribe: Any) -> bytes:
    m = manifests
    tools = [
        m.mutate_tool("prescribeMedication", **prescribe),
        m.mutate_tool("bookAppointment", module="appointment", policyDomain="appointment", hitlTier="low"),
        m.condor_tool("listActiveMedications", retryClass="transient"),
        m.condor_tool("searchTools", plane="planner-control", module="search", policyDomain=None),
    ]
    return m.encode(m.condor(tools, forcedFloors=[]))


def _by_id(response: Any) -> dict[str, dict[str, Any]]:
    return {t["declaredId"]: t for t in response.json()["tools"]}


def test_every_tool_is_answered_with_its_effective_policy(api: Any, manifests: Any) -> None:
    catalog_import(raw=_catalog(manifests), via="test")
    unsigned = _by_id(api(profile="clinical-production"))
    assert not unsigned["prescribeMedication"]["inEffect"] and not unsigned["prescribeMedication"]["planEligible"]
    assert unsigned["prescribeMedication"]["awaitingSignoff"]
    sign_off("condor")
    tools = _by_id(api(profile="clinical-production"))
    prescribe, book, reads, search = (
        tools[k] for k in ("prescribeMedication", "bookAppointment", "listActiveMedications", "searchTools")
    )
    assert prescribe == {
        "system": "condor",
        "declaredId": "prescribeMedication",
        "inEffect": True,
        "effectivePolicyClass": "mutate",
        "hitlTier": "high",
        "declaredHitlTier": "high",
        "floors": prescribe["floors"],
        "retryClass": "none",
        "planEligible": True,
        "revisionInEffect": 1,
        "awaitingSignoff": False,
        "newestRevision": 1,
    }
    assert book["hitlTier"] == "low" and book["floors"] == []
    assert reads["retryClass"] == "transient" and reads["effectivePolicyClass"] == "read"
    assert not search["planEligible"]


def test_a_floor_raises_the_tier_the_runtime_is_told(api: Any, manifests: Any, make_user: Any) -> None:
    catalog_import(raw=_catalog(manifests, hitlTier="low"), via="test")
    sign_off("condor")
    prescribe = _by_id(api(profile="clinical-production"))["prescribeMedication"]
    assert (prescribe["declaredHitlTier"], prescribe["hitlTier"]) == ("low", "high") and prescribe["floors"]


def test_a_weakening_awaits_sign_off_under_a_clinical_profile_only(api: Any, manifests: Any) -> None:
    catalog_import(raw=_catalog(manifests), via="test")
    sign_off("condor")
    lowered = manifests.encode(
        manifests.condor(
            [
                manifests.mutate_tool("prescribeMedication"),
                manifests.mutate_tool("bookAppointment", module="appointment", policyDomain="appointment"),
                manifests.condor_tool("listActiveMedications", retryClass="transient", policyDomain="billing"),
            ],
            forcedFloors=[],
        )
    )
    catalog_import(raw=lowered, via="test")
    clinical = _by_id(api(profile="clinical-production"))
    assert "searchTools" not in clinical  # removed: at once
    assert clinical["bookAppointment"]["hitlTier"] == "high"  # raised: at once
    assert not clinical["bookAppointment"]["awaitingSignoff"]
    assert clinical["listActiveMedications"]["awaitingSignoff"]  # a changed policy domain waits
    assert clinical["listActiveMedications"]["revisionInEffect"] == 1
    demo = _by_id(api(profile="demo"))
    assert demo["listActiveMedications"]["revisionInEffect"] == 2


def test_the_answer_says_since_which_sign_off_each_system_is_served(api: Any, manifests: Any) -> None:
    catalog_import(raw=_catalog(manifests), via="test")
    [never] = api(profile="clinical-production").json()["signedOff"]
    assert never == {"system": "condor", "revision": None, "automatic": False, "by": [], "at": None}

    sign_off("condor")
    [signed] = api(profile="clinical-production").json()["signedOff"]
    assert (signed["revision"], signed["automatic"], signed["by"]) == (1, False, ["officer-one", "officer-two"])
    assert signed["at"] is not None

    raised = manifests.encode(
        manifests.condor(
            [
                manifests.mutate_tool("prescribeMedication"),
                manifests.mutate_tool("bookAppointment", module="appointment", policyDomain="appointment"),
                manifests.condor_tool("listActiveMedications", retryClass="transient"),
                manifests.condor_tool("searchTools", plane="planner-control", module="search", policyDomain=None),
            ],
            forcedFloors=[],
        )
    )
    catalog_import(raw=raised, via="test")  # bookAppointment's tier raised: strengthening, approved at import
    [automatic] = api(profile="clinical-production", system="condor").json()["signedOff"]
    assert (automatic["revision"], automatic["automatic"], automatic["by"]) == (2, True, [])


def test_etag_answers_304_until_an_import_or_sign_off_changes_it(api: Any, manifests: Any) -> None:
    catalog_import(raw=_catalog(manifests), via="test")
    first = api(profile="clinical-production")
    etag = first["ETag"]
    api(profile="clinical-production", etag=etag, expect=304)
    sign_off("condor")
    changed = api(profile="clinical-production", etag=etag)
    assert changed["ETag"] != etag
    one = api("/api/v1/catalog/tools/condor/prescribeMedication/policy", profile="clinical-production")
    api(
        "/api/v1/catalog/tools/condor/prescribeMedication/policy",
        profile="clinical-production",
        etag=one["ETag"],
        expect=304,
    )


def test_bad_requests_say_what_is_wrong(api: Any, manifests: Any) -> None:
    catalog_import(raw=_catalog(manifests), via="test")
    assert "not a catalog profile" in api(profile="nope", expect=422).json()["detail"]
    api(expect=422)  # no profile
    api(profile="x" * 101, expect=422)
    api(profile="demo", system="other", expect=422)
    missing = api("/api/v1/catalog/tools/condor/noSuchTool/policy", profile="demo", expect=404)
    assert "is not a live tool" in missing.json()["detail"]
    assert Client().get(URL, {"profile": "demo"}).status_code == 401


def test_the_whole_catalog_is_answered_in_a_fixed_number_of_queries(
    api: Any, manifests: Any, django_assert_max_num_queries: Any
) -> None:
    catalog_import(raw=_catalog(manifests), via="test")
    api(profile="clinical-production")  # keeps the floors and this answer in the process
    # built: token (+ its last use), catalog version, floors version, profile, tools; since which sign-off: the
    # systems, their newest approved revisions, those revisions, their reviews
    with django_assert_max_num_queries(11):
        api(profile="demo")
    # kept: the ETag still names the same catalog, sign-offs and floors, so only those versions are read
    with django_assert_max_num_queries(4):
        api(profile="demo")


def test_a_kept_answer_is_never_served_after_a_change(api: Any, manifests: Any) -> None:
    catalog_import(raw=_catalog(manifests), via="test")
    assert not _by_id(api(profile="clinical-production"))["prescribeMedication"]["inEffect"]
    sign_off("condor")
    assert _by_id(api(profile="clinical-production"))["prescribeMedication"]["inEffect"]


def test_the_policy_endpoints_are_documented_with_their_errors(client: Client, make_user: Any) -> None:
    client.force_login(make_user("ines", roles.CATALOG_ADMIN))
    spec = client.get("/api/v1/openapi.json").json()
    policy = spec["paths"]["/api/v1/catalog/policy"]["get"]
    assert {"200", "304", "401", "422"} <= set(policy["responses"])
    one = spec["paths"]["/api/v1/catalog/tools/{system}/{declared_id}/policy"]["get"]
    assert {"200", "304", "401", "404", "422"} <= set(one["responses"])
