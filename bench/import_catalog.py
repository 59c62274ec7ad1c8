"""Benchmark: importing a generated 5,000-tool condor-catalog/v1 manifest.

Reports medians over N rounds (each on a freshly flushed database) of:
  - full import of 5,000 tools into an empty catalog,
  - re-import of the byte-identical manifest (must write nothing),
  - re-import of the same content with new bytes (another commit, same tools: the full diff path;
    must write nothing either),
  - import after changing 10 tools.
Uses DATABASE_URL when set (e.g. PostgreSQL), else a throw-away SQLite file.

    .venv/bin/python bench/import_catalog.py [--tools 5000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _django import setup_django  # noqa: E402

MODULES = ["medication", "appointment", "note", "billing", "document", "lab", "vitals", "patient", "cards", "allergy"]


def make_manifest(n: int) -> dict[str, Any]:
    tools = []
    for i in range(n):
        module = MODULES[i % len(MODULES)]
        mutating = i % 7 == 0
        tools.append(
            {
                "id": f"{module}Tool{i}",
                "plane": "business" if i % 50 else "planner-control",
                "module": module,
                "availability": "production" if i % 20 else "preview",
                "policyClass": "mutate" if mutating else "read",
                "policyDomain": module,
                "mutating": mutating,
                "retryClass": "none" if mutating else "transient",
                "idempotency": "durable-required" if mutating else "natural",
                "hitlTier": ("high" if i % 2 else "low") if mutating else None,
                "ragDescription": (
                    f"USE WHEN: the clinician asks for {module} task number {i}.\n"
                    f"DO NOT USE WHEN: the request concerns another {module} task.\n"
                    "REQUIRES: a patient in context.\n"
                    f"PRODUCES: a {module} card for task {i}."
                ),
                "ragKeywords": {"en": [f"{module} task {i}", f"{module} {i}"], "de": [f"{module} Aufgabe {i}"]},
                "instructionFragment": "Confirm the patient before calling." if mutating else None,
                "stylingFragment": None,
                "outputInstructions": "NEVER show UUIDs.",
                "outputContainsIds": bool(i % 3 == 0),
                "alwaysInclude": False,
                "metadataRef": f"tools/{module}/tool-{i}.rag.ts#meta",
                "source": f"tools-registry/tools/{module}/tool-{i}.tool.ts",
                "aliases": [f"{module}.tool.v{i}"],
            }
        )
    teams = [
        {"id": m, "name": m.title(), "oncall": f"@{m}-oncall", "channel": f"#{m}", "escalation": "Page lead"}
        for m in MODULES
    ] + [{"id": "core", "name": "Core", "oncall": "@core", "channel": "#core", "escalation": "Page platform lead"}]
    return {
        "format": "condor-catalog/v1",
        "source": {"repository": "bench", "commit": "0" * 40},
        "baselineCount": n,
        "teams": teams,
        "ownership": [{"plane": "business", "module": m, "team": m} for m in MODULES]
        + [{"plane": "planner-control", "module": "*", "team": "core"}],
        "profiles": [
            {"id": "clinical-production", "clinical": True, "availability": ["production"], "include": []},
            {"id": "demo", "clinical": False, "availability": ["production", "preview", "demo-only"]},
        ],
        "forcedFloors": [{"id": "intake", "trigger": "multi-entity-intake", "tools": [tools[1]["id"]]}],
        "tools": tools,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    setup_django()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from catalog.models import CatalogRevision, CatalogState, Tool, ToolChange
    from catalog.services.imports import catalog_import
    from condor_admin.celery import app

    # The import is timed, not the embedding it queues after commit: that is the worker's job (bench/rag_worker.py).
    app.conf.task_always_eager = False  # with no REDIS_URL the broker is in-memory: queued, never run here

    manifest = make_manifest(args.tools)
    raw = json.dumps(manifest).encode()
    rebytes = copy.deepcopy(manifest)
    rebytes["source"]["commit"] = "1" * 40
    raw_rebytes = json.dumps(rebytes).encode()
    changed = copy.deepcopy(manifest)
    for tool in changed["tools"][:: args.tools // 10][:10]:
        tool["ragDescription"] += " (revised)"
    raw_changed = json.dumps(changed).encode()

    def timed(payload: bytes) -> tuple[float, int, Any]:
        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            result = catalog_import(raw=payload, via="bench")
            elapsed = time.perf_counter() - start
        writes = sum(
            1 for q in ctx.captured_queries if q["sql"].lstrip().split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}
        )
        return elapsed, writes, result

    rows: dict[str, list[float]] = {"full": [], "identical": [], "same-content": [], "10-changed": []}
    writes: dict[str, int] = {}
    for _ in range(args.rounds):
        CatalogState.objects.all().delete()
        ToolChange.objects.all().delete()
        Tool.objects.all().delete()
        CatalogRevision.objects.all().delete()
        for label, payload in (
            ("full", raw),
            ("identical", raw),
            ("same-content", raw_rebytes),
            ("10-changed", raw_changed),
        ):
            elapsed, n_writes, result = timed(payload)
            rows[label].append(elapsed)
            writes[label] = n_writes
            if label == "10-changed":
                assert len(result.changed) == 10, result.summary()
            if label in ("identical", "same-content"):
                assert result.unchanged, result.summary()

    print(
        f"import_catalog benchmark: {args.tools} tools, {args.rounds} rounds, "
        f"database {connection.vendor}, manifest {len(raw) / 1e6:.1f} MB"
    )
    print(f"{'case':<14} {'median s':>9} {'min s':>7} {'max s':>7} {'write statements':>17}")
    for label, values in rows.items():
        print(f"{label:<14} {statistics.median(values):9.3f} {min(values):7.3f} {max(values):7.3f} {writes[label]:>17}")


if __name__ == "__main__":
    main()
