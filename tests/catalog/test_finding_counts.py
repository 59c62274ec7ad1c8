"""The findings counts kept on each tool (Tool.findings_count, error_count; issue 24) equal the findings themselves
after every writer of findings: an import, a re-import that clears and adds findings, a runtime finding from what
ran, and the retention that drops stale runtime findings."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from catalog.models import Tool
from catalog.services.imports import catalog_import
from catalog.usage import otlp
from catalog.usage.services.ingest import usage_ingest
from catalog.usage.services.retention import usage_compact
from tests.catalog.usage.spans import export, tool_span
from tests.conftest import condor_manifest, encode, signed_import

pytestmark = pytest.mark.django_db


def kept_and_real() -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """Per tool: (findings, errors) as kept on the row, and as counted from the findings."""
    kept = {t.declared_id: (t.findings_count, t.error_count) for t in Tool.objects.all()}
    real = {
        row["declared_id"]: (row["n"], row["e"])
        for row in Tool.objects.values("declared_id").annotate(
            n=Count("findings"), e=Count("findings", filter=Q(findings__severity="error"))
        )
    }
    return kept, real


def assert_kept_counts_are_real() -> dict[str, tuple[int, int]]:
    kept, real = kept_and_real()
    assert kept == real
    return kept


def manifest_with(*tools: dict[str, Any], commit: str) -> bytes:
    return encode(condor_manifest(list(tools), source={"repository": "ddx-api", "commit": commit}))


def test_kept_counts_follow_an_import_and_a_reimport_that_clears_and_adds_findings() -> None:
    catalog_import(raw=encode(condor_manifest()), via="test")
    before = assert_kept_counts_are_real()
    # Re-import: one tool loses its description's shape (a finding appears), the rest stay as they were.
    tools = condor_manifest()["tools"]
    tools[0] = {**tools[0], "ragDescription": "short"}
    catalog_import(raw=manifest_with(*tools, commit="c0ffee2"), via="test")
    after = assert_kept_counts_are_real()
    assert after[tools[0]["id"]][0] > before[tools[0]["id"]][0]
    # And back: the finding is cleared, the count drops with it.
    catalog_import(raw=encode(condor_manifest(source={"repository": "ddx-api", "commit": "c0ffee3"})), via="test")
    assert assert_kept_counts_are_real()[tools[0]["id"]] == before[tools[0]["id"]]


def test_kept_counts_follow_a_runtime_finding_and_the_retention_that_drops_it() -> None:
    signed_import(encode(condor_manifest()))
    before = assert_kept_counts_are_real()
    usage_ingest(list(otlp.spans(export([tool_span("prescribeMedication", condor__policy_class="read")]))))
    after = assert_kept_counts_are_real()
    assert after["prescribeMedication"][0] > before["prescribeMedication"][0]  # a read stamp on a write
    usage_compact(now=timezone.now() + timedelta(days=settings.CONDOR_USAGE_FINDING_DAYS + 1))
    assert assert_kept_counts_are_real()["prescribeMedication"] == before["prescribeMedication"]
