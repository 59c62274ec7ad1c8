"""The catalog browser's queries match their indexes (issue 24): on PostgreSQL, page 1, a deep page, sorted pages
each can read migration 0019's sort indexes in order instead of scanning and sorting the tools. (The search's
trigram index is chosen at 50,000 tools, see the bench, but not over the few rows a quick test can afford.)"""

from __future__ import annotations

import random

import pytest
from django.db import connection

from catalog.models import Team, Tool
from catalog.selectors.catalog import CatalogFilters, CatalogRows, catalog_kept, catalog_keys, catalog_rows
from catalog.services.imports import catalog_import
from tests.conftest import condor_manifest, encode, requires_postgres

pytestmark = [pytest.mark.django_db, requires_postgres]

PAGE = 50
TOOLS = 2000
MODULES = ["medication", "appointment", "note", "billing", "lab"]


def fill_catalog() -> None:
    """A real import, then copies of its first tool, written in a shuffled order (an import's order is not the
    browser's): cheap rows for the planner to weigh."""
    catalog_import(raw=encode(condor_manifest()), via="test")
    template = Tool.objects.order_by("pk").first()
    assert template is not None
    # Each team owns a share of the copies, as in a real catalog: a team's pages are a fraction of the whole, so
    # reading the team's index beats walking the catalog's id index and skipping other teams' tools.
    teams = list(Team.objects.order_by("slug"))
    numbers = list(range(TOOLS))
    random.Random(24).shuffle(numbers)
    copies = []
    for i in numbers:
        tool = Tool.objects.get(pk=template.pk)
        module = MODULES[i % len(MODULES)]
        tool.pk = None
        tool.declared_id = f"{module}Tool{i}"
        tool.canonical_key = f"{module}.tool{i}"
        tool.llm_name = f"{module}_tool{i}"
        tool.module = module
        tool.owner = teams[i % len(teams)]
        tool.rag_description = f"USE WHEN: the clinician asks for {module} task number {i}."
        copies.append(tool)
    Tool.objects.bulk_create(copies, batch_size=1000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_tool")


CASES = [
    (CatalogFilters(), 1, "tool_live_id_idx"),
    (CatalogFilters(), TOOLS // PAGE - 5, "tool_live_id_idx"),
    (CatalogFilters(sort="module"), TOOLS // PAGE // 2, "tool_live_module_idx"),
    (CatalogFilters(sort="-findings"), TOOLS // PAGE - 5, "tool_live_findings_idx"),
]


def test_every_catalog_page_kind_can_read_its_index() -> None:
    """Page 1, a deep page and sorted pages each have an index the query matches (its columns, order and the
    live condition). At a few thousand rows the planner rightly prefers scanning and sorting a table this small, so
    the test forbids both and asserts the index the query then reads; a query that no longer matches its index
    plans a scan anyway and fails. Timings at 50,000 tools: bench/README.md, "Fifty thousand tools (issue 24):
    console pages"."""
    fill_catalog()
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_sort = off")  # and read it in order, not gathered and sorted
    # The unfiltered catalog is counted from the kept figure, a filtered one for real: both are the live rows.
    assert CatalogRows(CatalogFilters(sort="module"), catalog_kept()).count() == Tool.objects.live().count()
    assert CatalogRows(CatalogFilters(module="lab"), catalog_kept()).count() == TOOLS // len(MODULES)
    owner = Tool.objects.order_by("pk").values_list("owner__slug", flat=True).first()
    assert owner
    owned = Tool.objects.live().filter(owner__slug=owner).count()
    assert owned > 4 * PAGE
    cases = [*CASES, (CatalogFilters(owner=owner), owned // PAGE - 1, "tool_live_owner_idx")]
    try:
        for filters, page, index in cases:
            window = slice((page - 1) * PAGE, page * PAGE)
            # What the page runs: its ids from the sort's index (the id is the index's last column, so no table
            # row is read for the rows skipped), then those rows by id.
            keys = catalog_keys(filters)[window]
            plan = keys.explain()
            assert "Seq Scan on catalog_tool" not in plan and index in plan, f"{filters} page {page}\n{plan}"
            # The two steps give the rows, in the order, of the one query they replace.
            expected = list(catalog_rows(filters)[window])
            paged = [
                {k: v for k, v in row.items() if k != "pk"} for row in CatalogRows(filters, catalog_kept())[window]
            ]
            assert expected and paged == expected
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_seqscan")
            cursor.execute("RESET enable_sort")
