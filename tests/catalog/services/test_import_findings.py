"""The findings step of an import at scale (issue 24): a diff writer, and sibling findings kept without a scan."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from catalog.models import CatalogRevision, Finding, Tool
from catalog.services.findings import findings_store, lint_view_from_db
from catalog.services.import_findings import SIBLING_RULE
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db


def catalog(manifests: Any, *tools: dict[str, Any], commit: str) -> bytes:
    return manifests.encode(
        manifests.condor(list(tools), source={"repository": "ddx-api", "commit": commit}, baselineCount=len(tools))
    )


def three(manifests: Any, **overrides: Any) -> list[dict[str, Any]]:
    tools = [manifests.condor_tool("listActiveMedications"), manifests.condor_tool("listAllergies")]
    tools.append(manifests.condor_tool("listVisits", **overrides))
    return tools


def store_siblings(pairs: list[tuple[str, str, float]]) -> None:
    """The worker's refresh, as it stores what it found (vectors are its business, not this test's)."""
    view = dataclasses.replace(lint_view_from_db("condor"), sibling_pairs=pairs)
    pks = dict(Tool.objects.filter(system="condor").live().values_list("declared_id", "pk"))
    revision = CatalogRevision.objects.get(system="condor", number=1)
    findings_store(view=view, revision=revision, tool_pks=pks, only=[SIBLING_RULE])


def siblings() -> set[tuple[str, str]]:
    return {
        (t, d["other"])
        for t, d in Finding.objects.filter(rule=SIBLING_RULE).values_list("tool__declared_id", "details")
    }


def test_an_import_drops_the_sibling_findings_of_a_changed_text_and_keeps_the_others(manifests: Any) -> None:
    catalog_import(raw=catalog(manifests, *three(manifests), commit="a"), via="test")
    store_siblings([("listActiveMedications", "listAllergies", 0.99), ("listAllergies", "listVisits", 0.98)])
    kept_pks = set(
        Finding.objects.filter(rule=SIBLING_RULE)
        .exclude(tool__declared_id="listVisits")
        .exclude(details__other="listVisits")
        .values_list("pk", flat=True)
    )
    assert len(kept_pks) == 2

    revision = catalog_import(
        raw=catalog(manifests, *three(manifests, ragDescription="USE WHEN: the visits.\n"), commit="b"), via="test"
    ).revision
    assert revision is not None

    assert siblings() == {("listActiveMedications", "listAllergies"), ("listAllergies", "listActiveMedications")}
    # The kept pair's rows are the same rows (not deleted and written again); the import says what it cleared.
    assert kept_pks <= set(Finding.objects.filter(rule=SIBLING_RULE).values_list("pk", flat=True))
    revision.refresh_from_db()
    assert [SIBLING_RULE, "listVisits"] in revision.findings_cleared
    assert [SIBLING_RULE, "listAllergies"] not in revision.findings_cleared
    counts = dict(Tool.objects.values_list("declared_id", "findings_count"))
    assert counts == {
        d: Finding.objects.filter(tool__declared_id=d).count()
        for d in ("listActiveMedications", "listAllergies", "listVisits")
    }


def test_a_change_outside_the_text_keeps_its_tool_sibling_findings(manifests: Any) -> None:
    catalog_import(raw=catalog(manifests, *three(manifests), commit="a"), via="test")
    store_siblings([("listAllergies", "listVisits", 0.98)])
    catalog_import(raw=catalog(manifests, *three(manifests, retryClass="none"), commit="b"), via="test")
    assert siblings() == {("listAllergies", "listVisits"), ("listVisits", "listAllergies")}


def test_retiring_a_tool_drops_its_sibling_findings_on_both_sides(manifests: Any) -> None:
    catalog_import(raw=catalog(manifests, *three(manifests), commit="a"), via="test")
    store_siblings([("listAllergies", "listVisits", 0.98)])
    catalog_import(raw=catalog(manifests, *three(manifests)[:2], commit="b"), via="test")
    assert siblings() == set()
    assert (
        Tool.objects.get(declared_id="listAllergies").findings_count
        == Finding.objects.filter(tool__declared_id="listAllergies").count()
    )


def test_a_small_change_rewrites_only_the_findings_that_changed(manifests: Any) -> None:
    """The diff writer: a finding still found keeps its row; only the changed tool's findings are written."""
    tools = three(manifests, outputContainsIds=True, outputInstructions=None)
    catalog_import(raw=catalog(manifests, *tools, commit="a"), via="test")
    before = dict(Finding.objects.values_list("pk", "tool__declared_id"))
    assert "listVisits" in before.values()  # its output-ids finding

    fixed = three(manifests, outputContainsIds=True, outputInstructions="NEVER show UUIDs.")
    catalog_import(raw=catalog(manifests, *fixed, commit="b"), via="test")
    after = dict(Finding.objects.values_list("pk", "tool__declared_id"))
    untouched = {pk for pk, tool in before.items() if tool != "listVisits"}
    assert untouched <= set(after)  # the other tools' findings were neither deleted nor written again
    assert len(after) < len(before)
    assert (
        Tool.objects.get(declared_id="listVisits").findings_count
        == Finding.objects.filter(tool__declared_id="listVisits").count()
    )
