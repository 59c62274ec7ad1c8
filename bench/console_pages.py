"""Benchmark: console pages at 500, 5,000 and 50,000 tools, in-process (server time, no network).

Each catalog size gets a fresh database (PostgreSQL when DATABASE_URL names one: a database `<name>_<n>` is created
next to it and dropped afterwards; else a throw-away SQLite file), filled by one `catalog_import` of
`make_manifest(n)` (no embedding: the worker's job, bench/rag_worker.py).

Side by side in alternating rounds, each of our operations and Django admin's changelist doing the same one over
the same Tool rows at the same page size (ToolAdmin.list_per_page set to the catalog's 50 here, not in the product):
page 1, a middle page, a deep page (about 70% through), a sorted middle page, a descending sort, and searches. Every
round rotates the page numbers and search terms, so no URL repeats back to back. Then the dashboard, the teams page,
a team page (with its runtime health: the bench writes 40 days of usage rollups first, `fill_usage`), the catalog
filtered to the tools without a call in 14 days (all of them, and one team's), a tool page and the owner lookup
(ours only: the admin has no such page). Prints medians, p90 and
ours/admin ratios, and the load average.

    DATABASE_URL=postgres://condor@127.0.0.1:55440/me .venv/bin/python bench/console_pages.py --tools 500 5000 50000
    .venv/bin/python bench/console_pages.py --tools 5000 --rounds 10      # SQLite
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

PAGE = 50


def cases(n: int, round_: int) -> dict[str, tuple[str, str | None]]:
    """This round's URL per operation: (ours, the admin's same operation or None)."""
    last = max(1, -(-n // PAGE))
    shift = round_ % 3  # rotate: a neighbouring page and another term each round
    mid = max(1, last // 2 - shift)
    deep = max(1, int(last * 0.7) + shift)
    term_id = f"Tool{(round_ * 37 + 123) % n}"
    term_text = f"task number {(round_ * 53 + 7) % n}."
    return {
        "page 1": ("/catalog/", "/admin/catalog/tool/"),
        "middle page": (f"/catalog/?page={mid}", f"/admin/catalog/tool/?p={mid}"),
        "deep page": (f"/catalog/?page={deep}", f"/admin/catalog/tool/?p={deep}"),
        # admin's o= counts list_display from 1: declared_id 1, system 2, plane 3, module 4
        "sorted by module, middle": (f"/catalog/?sort=module&page={mid}", f"/admin/catalog/tool/?o=4.1&p={mid}"),
        "sorted by plane desc, deep": (f"/catalog/?sort=-plane&page={deep}", f"/admin/catalog/tool/?o=-3.1&p={deep}"),
        "search, a tool id": (f"/catalog/?q={term_id}", f"/admin/catalog/tool/?q={term_id}"),
        "search, a description phrase": (f"/catalog/?q={term_text}", f"/admin/catalog/tool/?q={term_text}"),
    }


def singles(some: Any, round_: int) -> dict[str, str]:
    key = some.canonical_key
    return {
        "dashboard": "/",
        "teams page": "/teams/",
        "team page": f"/teams/{some.owner.slug}/",
        "catalog, calls: none": "/catalog/?calls=none",
        "catalog, a team's calls: none": f"/catalog/?owner={some.owner.slug}&calls=none",
        "tool page": f"/tools/{some.system}/{some.declared_id}/",
        "owner lookup, exact": f"/owners/?q={key.replace('.', '_')}",
        "owner lookup, near miss": f"/owners/?q={key.replace('.', ' ')[:-1]}x",
    }


def fill_usage() -> int:
    """A runtime heard for 40 days, as the ORM stores its rollups: four tools in five called, each with an hour row
    every 30 hours over 30 days and a minute row every two hours over the last day; the fifth never called, and
    every fifth of the called ones last called 20 days ago (dead). The team page's health and the catalog's Calls
    filter read these rows."""
    from datetime import timedelta

    from django.utils import timezone

    from catalog.models import TelemetrySource, Tool, ToolUsage

    now = timezone.now().replace(second=0, microsecond=0)
    TelemetrySource.objects.create(service="bench", first_seen=now - timedelta(days=40), last_seen=now)
    rows: list[ToolUsage] = []
    written = 0
    for i, pk in enumerate(Tool.objects.order_by("pk").values_list("pk", flat=True).iterator()):
        if i % 5 == 0:
            continue
        hours = range(20 * 24, 30 * 24, 30) if i % 25 == 1 else range(25, 30 * 24, 30)
        rows += [ToolUsage(tool_id=pk, resolution="h", bucket=now - timedelta(hours=h), calls=3) for h in hours]
        if i % 25 != 1:
            rows += [
                ToolUsage(tool_id=pk, resolution="m", bucket=now - timedelta(hours=h), calls=1) for h in range(0, 24, 2)
            ]
        if len(rows) >= 20_000:
            ToolUsage.objects.bulk_create(rows)
            written, rows = written + len(rows), []
    ToolUsage.objects.bulk_create(rows)
    return written + len(rows)


def run_one(n: int, rounds: int) -> dict[str, Any]:
    """Fill this process's (empty) database with n tools and time every page: {name: [seconds...]}."""
    from _django import setup_django

    setup_django()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from import_catalog import make_manifest

    from catalog.admin import ToolAdmin
    from catalog.models import Tool
    from catalog.selectors.catalog import CatalogFilters, CatalogRows, catalog_kept
    from catalog.services.imports import catalog_import
    from condor_admin.celery import app

    app.conf.task_always_eager = False  # the embedding it queues is the worker's job, not timed here
    settings.ALLOWED_HOSTS = ["*"]
    started = time.perf_counter()
    catalog_import(raw=json.dumps(make_manifest(n)).encode(), via="bench")
    fill = time.perf_counter() - started
    started = time.perf_counter()
    usage_rows = fill_usage()
    usage_fill = time.perf_counter() - started
    dead = CatalogRows(CatalogFilters(calls="none"), catalog_kept()).count()
    assert dead == len(range(0, n, 5)) + len(range(1, n, 25)), dead  # never called, and last called 20 days ago
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")  # what autovacuum does shortly after an import
    ToolAdmin.list_per_page = PAGE
    admin = get_user_model().objects.create_superuser("bench", password="bench-pass-123")
    client = Client()
    client.force_login(admin)
    some = Tool.objects.filter(plane="business", owner__isnull=False).order_by("declared_id")[n // 3]

    ours: dict[str, list[float]] = {}
    stock: dict[str, list[float]] = {}
    single: dict[str, list[float]] = {}

    def timed(url: str) -> float:
        start = time.perf_counter()
        response = client.get(url)
        took = time.perf_counter() - start
        assert response.status_code == 200, (url, response.status_code)
        return took

    for url_pair in cases(n, 0).values():  # warm up: templates, the lookup index, the facets
        timed(url_pair[0])
        if url_pair[1]:
            timed(url_pair[1])
    for url in singles(some, 0).values():
        timed(url)
    for round_ in range(rounds):
        for name, (url, admin_url) in cases(n, round_).items():
            # alternate who goes first, so a slow moment hits both alike
            order = [("ours", url), ("admin", admin_url)] if round_ % 2 == 0 else [("admin", admin_url), ("ours", url)]
            for who, u in order:
                if u is not None:
                    (ours if who == "ours" else stock).setdefault(name, []).append(timed(u))
        for name, url in singles(some, round_).items():
            single.setdefault(name, []).append(timed(url))
    return {
        "n": n,
        "vendor": connection.vendor,
        "fill": fill,
        "usage_rows": usage_rows,
        "usage_fill": usage_fill,
        "ours": ours,
        "admin": stock,
        "single": single,
    }


def fresh_database_url(base: str, n: int) -> tuple[str, str | None]:
    """A URL for an empty database for n tools, and the PostgreSQL database to drop afterwards."""
    if not base.startswith("postgres"):
        return f"sqlite:///{tempfile.mkdtemp(prefix='condor-bench-')}/bench.sqlite3", None
    import psycopg

    parts = urlsplit(base)
    name = f"{parts.path.lstrip('/')}_{n}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}")), name


def drop_database(base: str, name: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def ms(values: list[float], q: float = 0.5) -> float:
    ordered = sorted(values)
    if q == 0.5:
        return statistics.median(ordered) * 1000
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def report(result: dict[str, Any]) -> None:
    print(
        f"\n{result['n']:,} tools on {result['vendor']}: filled in {result['fill']:.1f} s, "
        f"{result['usage_rows']:,} usage rows in {result['usage_fill']:.1f} s; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"{'operation':<30} {'ours ms':>8} {'p90':>7} {'admin ms':>9} {'p90':>7} {'ours/admin':>10}")
    for name, values in result["ours"].items():
        stock = result["admin"].get(name)
        ratio = f"{ms(values) / ms(stock):9.2f}x" if stock else ""
        admin_cols = f"{ms(stock):9.1f} {ms(stock, 0.9):7.1f}" if stock else f"{'':9} {'':7}"
        print(f"{name:<30} {ms(values):8.1f} {ms(values, 0.9):7.1f} {admin_cols} {ratio:>10}")
    for name, values in result["single"].items():
        print(f"{name:<30} {ms(values):8.1f} {ms(values, 0.9):7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--rounds", type=int, default=0, help="per size; default 15, 10 and 5 by size")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.rounds)))
        return
    base = os.environ.get("DATABASE_URL", "")
    for n in args.tools:
        rounds = args.rounds or (15 if n <= 1000 else 10 if n <= 10000 else 5)
        url, dropping = fresh_database_url(base, n)
        try:
            child = subprocess.run(
                [sys.executable, __file__, "--child", str(n), "--rounds", str(rounds)],
                env={**os.environ, "DATABASE_URL": url},
                capture_output=True,
                text=True,
            )
            if child.returncode:
                sys.exit(f"{n} tools: the run failed\n{child.stderr}")
            out = child.stdout
        finally:
            if dropping:
                drop_database(base, dropping)
        report(json.loads(out.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
