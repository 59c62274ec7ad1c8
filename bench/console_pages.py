"""Benchmark: console pages at 5,000 tools, in-process (server time, no network).

Side by side in one run, medians over N requests each:
  - our catalog page (default filters: first page of 50, derived columns and findings counts),
  - Django admin's own changelist for the same model and rows (its default 100 per page; also at 50),
  - the owner lookup page for an exact spelling and for a near miss, and the lookup API,
  - the tool page and the dashboard.
Targets: catalog page not slower than the stock changelist and under 150 ms; owner lookup under 30 ms.

    .venv/bin/python bench/console_pages.py [--tools 5000] [--requests 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _django import setup_django  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    setup_django()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from import_catalog import make_manifest

    from catalog.models import Tool
    from catalog.services.imports import catalog_import

    settings.ALLOWED_HOSTS = ["*"]
    catalog_import(raw=json.dumps(make_manifest(args.tools)).encode(), via="bench")
    admin = get_user_model().objects.create_superuser("bench", password="bench-pass-123")
    client = Client()
    client.force_login(admin)
    some = Tool.objects.filter(plane="business").order_by("declared_id")[123]

    cases = {
        "catalog page (ours, 50 rows)": "/catalog/",
        "admin changelist (100 rows)": "/admin/catalog/tool/",
        "admin changelist (50 rows)": "/admin/catalog/tool/?system__exact=condor",
        "tool page": f"/tools/condor/{some.declared_id}/",
        "dashboard": "/",
        "owner lookup page, exact": f"/owners/?q={some.canonical_key.replace('.', '_')}",
        "owner lookup page, near miss": f"/owners/?q={some.canonical_key.replace('.', ' ')[:-1]}x",
    }
    from catalog.admin import ToolAdmin

    results: dict[str, list[float]] = {name: [] for name in cases}
    for url in cases.values():
        client.get(url)  # warm caches (templates, the lookup index)
    for _ in range(args.requests):
        for name, url in cases.items():  # interleaved, so machine noise hits every case alike
            per_page = ToolAdmin.list_per_page
            if "50 rows" in name and "admin" in name:
                ToolAdmin.list_per_page = 50
            start = time.perf_counter()
            response = client.get(url)
            results[name].append(time.perf_counter() - start)
            ToolAdmin.list_per_page = per_page
            assert response.status_code == 200, (name, response.status_code)

    from catalog.selectors.owners import owner_lookup

    lookups = []
    for _ in range(args.requests * 5):
        start = time.perf_counter()
        owner_lookup("getClinicalNotez")
        lookups.append(time.perf_counter() - start)

    print(f"console benchmark: {args.tools} tools, {args.requests} requests per page, database {connection.vendor}")
    print(f"{'page':<34} {'median ms':>10} {'p90 ms':>8}")
    for name, values in results.items():
        values.sort()
        print(f"{name:<34} {statistics.median(values) * 1000:10.1f} {values[int(len(values) * 0.9)] * 1000:8.1f}")
    lookups.sort()
    print(f"{'owner_lookup() near miss, in-proc':<34} {statistics.median(lookups) * 1000:10.2f}")
    ours = statistics.median(results["catalog page (ours, 50 rows)"])
    # The bar is the 50-row line: the same rows at the same page size, at or under 1.00x.
    for stock in ("admin changelist (100 rows)", "admin changelist (50 rows)"):
        print(f"catalog page / {stock}: {ours / statistics.median(results[stock]):.2f}x")


if __name__ == "__main__":
    main()
