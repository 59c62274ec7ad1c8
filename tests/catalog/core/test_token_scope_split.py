"""Migration 0013 splits the old `catalog` scope: every token keeps reading, only importers keep importing."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps

from catalog.models import ApiToken
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db

split = importlib.import_module("catalog.migrations.0013_token_scopes").split


def token(name: str, scopes: list[str]) -> ApiToken:
    return ApiToken.objects.create(name=name, prefix=name[:10], token_hash=name.ljust(64, "0"), scopes=scopes)


def test_a_token_that_imported_keeps_importing_and_an_export_token_only_reads(manifests: Any) -> None:
    importer, exporter, runtime = token("ci", ["catalog"]), token("export", ["catalog", "cards"]), token("rt", ["rag"])
    catalog_import(raw=manifests.encode(manifests.condor()), via="api token ci")
    split(apps, None)
    assert ApiToken.objects.get(pk=importer.pk).scopes == ["catalog:read", "catalog:write"]
    assert ApiToken.objects.get(pk=exporter.pk).scopes == ["catalog:read", "cards"]
    assert ApiToken.objects.get(pk=runtime.pk).scopes == ["rag"]
