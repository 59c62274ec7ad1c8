"""The OpenAPI document names every manifest format the import accepts: the dialect registry, not a copy of it."""

from __future__ import annotations

from django.test import Client

from catalog.domain.manifest import DIALECTS


def test_the_import_documents_every_format_the_registry_accepts_mcp_tools_included() -> None:
    document = Client().get("/api/v1/openapi.json").json()
    body = document["paths"]["/api/v1/catalog/revisions"]["post"]["requestBody"]
    documented = body["content"]["application/json"]["schema"]["properties"]["format"]["enum"]
    assert sorted(documented) == sorted(DIALECTS)
    assert "mcp-tools/v1" in documented
    assert all(f in body["description"] for f in DIALECTS)
