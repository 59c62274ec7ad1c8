"""Benchmark: linting a 5,000-tool catalog against every rule (target: under 3 s).

Reports medians over N rounds, measured side by side in one run:
  - rules only: `lint()` over an in-memory view (the pure rules engine),
  - stored catalog: building the view from the database (4 queries) and linting it, as `lint_catalog` does,
  - recompute and store: lint plus replacing the stored findings, as an import does.

    .venv/bin/python bench/lint_catalog.py [--tools 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _django import setup_django  # noqa: E402


def make_tucan_manifest(n: int) -> dict[str, object]:
    """A TUCAN catalog with flat mixed-language keyword lists, so language detection is measured too."""
    words = [("list", "anzeigen"), ("open", "öffnen"), ("create", "anlegen"), ("search", "suchen"), ("send", "senden")]
    tools = []
    for i in range(n):
        en, de = words[i % len(words)]
        category = f"category-{i % 35}"
        tools.append(
            {
                "id": f"{en}-thing-{i}",
                "description": f"{en.title()} thing {i}.",
                "category": category,
                "inputSchema": {"type": "object", "properties": {"patientId": {"type": "string"}}, "required": []},
                "metadata": {
                    "ragDescription": f"USE WHEN: the doctor wants to {en} thing {i}.\nDO NOT USE WHEN: other things."
                    f"\nREQUIRES: a patient.\nPRODUCES: thing {i}.",
                    "ragKeywords": [f"{en} thing {i}", f"Ding {i} {de}", f"Übersicht {i}", "SOP"],
                    "mutating": en in ("create", "send"),
                    "alwaysInclude": False,
                    "outputInstructions": "NEVER show UUIDs.",
                },
            }
        )
    return {"format": "tucan-tools/v1", "agents": [{"id": "clinical", "categories": ["category-1"]}], "tools": tools}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    setup_django()
    from import_catalog import make_manifest

    from catalog.services.imports import catalog_import

    catalog_import(raw=json.dumps(make_manifest(args.tools)).encode(), via="bench")
    catalog_import(raw=json.dumps(make_tucan_manifest(args.tools)).encode(), via="bench")
    for system in ("condor", "tucan"):
        measure(system, args.rounds)


def measure(system: str, rounds: int) -> None:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from catalog.domain import rules
    from catalog.services.findings import findings_recompute, lint_view_from_db

    view = lint_view_from_db(system)

    timings: dict[str, list[float]] = {"rules only": [], "stored catalog": [], "recompute and store": []}
    queries = 0
    found = []
    for _ in range(rounds):
        start = time.perf_counter()
        found = rules.lint(view)
        timings["rules only"].append(time.perf_counter() - start)

        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            rules.lint(lint_view_from_db(system))
            timings["stored catalog"].append(time.perf_counter() - start)
        queries = len(ctx.captured_queries)

        start = time.perf_counter()
        with transaction.atomic():
            findings_recompute(system)
        timings["recompute and store"].append(time.perf_counter() - start)

    print(
        f"\nlint_catalog benchmark: {system}, {len(view.tools)} tools, {len(rules.RULES)} rules, {rounds} rounds, "
        f"database {connection.vendor}"
    )
    print(f"{'case':<22} {'median s':>9} {'min s':>7} {'max s':>7}")
    for label, values in timings.items():
        print(f"{label:<22} {statistics.median(values):9.3f} {min(values):7.3f} {max(values):7.3f}")
    print(f"stored-catalog view built with {queries} queries; {len(found)} findings:")
    for (severity, rule), n in sorted(Counter((f.severity, f.rule) for f in found).items()):
        print(f"  {n:>6}  {severity:<8} {rule}")


if __name__ == "__main__":
    main()
