"""Console pages run a fixed number of SQL queries whatever the catalog size (500 and 5,000 tools)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db
MODULES = ("medication", "billing", "note", "lab", "vitals")


def big_catalog(manifests: Any, n: int) -> None:
    tools = []
    for i in range(n):
        module = MODULES[i % len(MODULES)]
        if i % 9 == 0:
            tools.append(manifests.mutate_tool(f"{module}Write{i}", module=module, hitlTier=None if i % 2 else "low"))
        else:
            tools.append(manifests.condor_tool(f"{module}Read{i}", module=module, aliases=[f"{module}.alias.{i}"]))
    manifest = manifests.condor(tools, forcedFloors=[], baselineCount=n)
    # An invalid mutate-without-tier would be refused; keep the ungated ones as fallback-class tools instead.
    for t in manifest["tools"]:
        if t["policyClass"] == "mutate" and t["hitlTier"] is None:
            t["policyClass"] = None
    catalog_import(raw=manifests.encode(manifest), via="test")


PAGES = {
    "/": 19,  # 4 of them the runtime card (catalog.usage.selectors.health.dashboard_health), 3 the findings chart
    "/catalog/": 8,
    "/catalog/?system=condor&mutating=yes&hitl=none&sort=-findings&q=medication": 8,
    "/catalog/?profile=clinical-production&owner=meds&page=3": 9,
    "/catalog/?owner=meds&calls=none": 10,  # one more: whether any runtime was heard (a note when none was)
    "/tools/condor/billingRead1/": 14,
    "/owners/?q=billing_read_1": 7,
    "/owners/?q=billingReed1": 7,
    "/teams/": 8,
    "/findings/": 10,
}


def page_query_counts(client: Client) -> dict[str, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = {}
    for url in PAGES:
        client.get(url)  # warm the owner-lookup index, as a running server has it
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200, url
        counts[url] = len(ctx.captured_queries)
    return counts


def test_page_query_counts_do_not_grow_from_500_to_5000_tools(manifests: Any, make_user: Any) -> None:
    client = Client()
    client.force_login(make_user("oscar", "on-call"))
    big_catalog(manifests, 500)
    client.get("/")  # the session's first request loads the language preference once
    small = page_query_counts(client)
    big_catalog(manifests, 5000)
    large = page_query_counts(client)
    assert large == small
    over = {url: n for url, n in large.items() if n > PAGES[url]}
    assert over == {}
