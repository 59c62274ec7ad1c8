"""POST /api/v1/catalog/revisions and the revision reads, as the runtime's build would call them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from catalog.models import ApiToken, CatalogRevision, Tool

pytestmark = pytest.mark.django_db
URL = "/api/v1/catalog/revisions"


def post(client: Client, body: bytes, token: str | None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.post(URL, data=body, content_type="application/json", headers=headers)


def test_import_creates_a_revision(client: Client, manifests: Any, make_token: Any) -> None:
    token = make_token("ci-export")
    response = post(client, manifests.encode(manifests.condor()), token)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["revision"]["number"] == 1 and body["revision"]["imported_via"] == "api token ci-export"
    assert sorted(body["added"]) == ["listActiveMedications", "prescribeMedication"]
    assert ApiToken.objects.get(name="ci-export").last_used_at is not None

    again = post(client, manifests.encode(manifests.condor()), token)
    assert again.status_code == 200 and again.json()["unchanged"] is True
    assert CatalogRevision.objects.count() == 1


def test_refused_manifest_is_a_422_listing_every_problem(client: Client, manifests: Any, make_token: Any) -> None:
    bad = manifests.condor([manifests.mutate_tool("prescribeMedication", hitlTier=None)], forcedFloors=[])
    response = post(client, manifests.encode(bad), make_token())
    assert response.status_code == 422
    assert response.json() == {
        "detail": "manifest refused: 1 problem(s); nothing was changed",
        "errors": ["tools[0].hitlTier: required when policyClass is mutate (tool prescribeMedication)"],
    }
    assert Tool.objects.count() == 0


def test_not_json_is_a_422(client: Client, make_token: Any) -> None:
    response = post(client, b"{nope", make_token())
    assert response.status_code == 422
    assert response.json()["errors"][0].startswith("$: not valid JSON")


def test_oversized_manifest_is_a_413(client: Client, manifests: Any, make_token: Any, settings: Any) -> None:
    settings.CONDOR_MAX_MANIFEST_BYTES = 100
    response = post(client, manifests.encode(manifests.condor()), make_token())
    assert response.status_code == 413
    assert "the limit is 100 bytes" in response.json()["detail"]
    assert Tool.objects.count() == 0


@pytest.mark.parametrize(
    ("token_fields", "status"),
    [
        ({"scopes": ("rag",)}, 403),
        ({"revoked_at": "now"}, 401),
        ({"expires_at": "past"}, 401),
    ],
)
def test_tokens_without_scope_or_no_longer_valid_are_refused(
    client: Client, manifests: Any, make_token: Any, token_fields: dict[str, Any], status: int
) -> None:
    fields = dict(token_fields)
    if fields.get("revoked_at") == "now":
        fields["revoked_at"] = timezone.now()
    if fields.get("expires_at") == "past":
        fields["expires_at"] = timezone.now() - timedelta(seconds=1)
    response = post(client, manifests.encode(manifests.condor()), make_token(**fields))
    assert response.status_code == status
    assert response.json()["detail"]
    assert Tool.objects.count() == 0


def test_missing_or_unknown_token_is_a_401(client: Client, manifests: Any, db: Any) -> None:
    assert post(client, manifests.encode(manifests.condor()), None).status_code == 401
    response = post(client, manifests.encode(manifests.condor()), "cnd_not-a-token")
    assert response.status_code == 401
    assert response.json() == {"detail": "missing, unknown, expired or revoked bearer token"}


def test_revision_reads_run_a_fixed_number_of_queries(
    client: Client, manifests: Any, make_token: Any, django_assert_max_num_queries: Any
) -> None:
    token = make_token()
    headers = {"Authorization": f"Bearer {token}"}
    post(client, manifests.encode(manifests.condor()), token)
    m = manifests.condor()
    m["tools"] += [manifests.condor_tool(f"listThing{i}") for i in range(30)]
    post(client, manifests.encode(m), token)
    with django_assert_max_num_queries(3):
        listing = client.get(URL, headers=headers)
    assert [r["number"] for r in listing.json()] == [2, 1]
    with django_assert_max_num_queries(4):
        detail = client.get(f"{URL}/condor/2", headers=headers)
    body = detail.json()
    assert body["added_count"] == 30 and len(body["changes"]) == 30
    assert body["changes"][0]["kind"] == "added"
    assert client.get(f"{URL}/condor/9", headers=headers).status_code == 404


def test_openapi_docs_are_served(client: Client) -> None:
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/catalog/revisions" in schema["paths"]


def test_a_read_token_reads_revisions_but_cannot_replace_the_catalog(
    client: Client, manifests: Any, make_token: Any
) -> None:
    post(client, manifests.encode(manifests.condor()), make_token("ci-import", scopes=("catalog:write",)))
    reader = make_token("ci-export", scopes=("catalog:read",))
    listed = client.get(URL, headers={"Authorization": f"Bearer {reader}"})
    assert listed.status_code == 200 and [r["number"] for r in listed.json()] == [1]

    response = post(client, manifests.encode(manifests.condor([manifests.condor_tool("listAllergies")])), reader)
    assert response.status_code == 403
    assert response.json() == {"detail": "token 'ci-export' lacks the scope 'catalog:write'"}
    assert CatalogRevision.objects.count() == 1 and not Tool.objects.filter(declared_id="listAllergies").exists()


def test_a_write_token_imports_but_does_not_read(client: Client, manifests: Any, make_token: Any) -> None:
    writer = make_token("ci-import", scopes=("catalog:write",))
    assert post(client, manifests.encode(manifests.condor()), writer).status_code == 201
    response = client.get(URL, headers={"Authorization": f"Bearer {writer}"})
    assert response.status_code == 403 and "lacks the scope 'catalog:read'" in response.json()["detail"]
