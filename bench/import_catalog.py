"""Benchmark: importing a generated condor-catalog/v1 manifest, beside its floor (issue 24).

Per size (default 500, 5,000 and 50,000 tools), medians over N rounds, each on a freshly emptied catalog, the
cases alternating within a round:
  - full import into an empty catalog, beside two floors: json.loads of the same bytes + bulk_create of the same
    Tool rows, and json.loads + bulk_create of every row the import stored (its Tool, ToolChange and Finding rows,
    the same values: what an importer that keeps the same records must at least do),
  - re-import of the byte-identical manifest (must write nothing),
  - re-import of the same content with new bytes (another commit, same tools: the full diff path; writes nothing),
  - import after changing 10 tools' texts, with a vector stored for every tool first (written with the ORM, as
    the worker leaves them), so the import's follow-on work is what users meet; beside its floor: json.loads of
    the manifest + bulk_create of 10 rows.
Uses DATABASE_URL when set (e.g. PostgreSQL), else a throw-away SQLite file. The embedding the import queues after
commit is not timed here: that is the worker's job (bench/rag_worker.py).

    .venv/bin/python bench/import_catalog.py [--tools 500 5000 50000] [--rounds 3]
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


def vectors_store(system: str) -> None:
    """A current vector for every live tool, as the worker leaves them (random unit vectors: no model run)."""
    import numpy as np

    from catalog.models import Tool, ToolEmbedding
    from catalog.rag.domain.phrases import PHRASE_SCHEME
    from catalog.rag.embedders import configured_model_id

    model_id, rng = configured_model_id(), np.random.default_rng(0)
    rows = []
    for pk, sha in Tool.objects.filter(system=system).live().values_list("pk", "rag_text_sha256"):
        vector = rng.standard_normal(64).astype("<f4")
        vector /= np.linalg.norm(vector)
        rows.append(
            ToolEmbedding(
                tool_id=pk,
                model_id=model_id,
                text_sha256=sha,
                dim=64,
                vector=vector.tobytes(),
                phrase_scheme=PHRASE_SCHEME,
            )
        )
    ToolEmbedding.objects.bulk_create(rows, batch_size=2000)


def floor(raw: bytes, rows: list[dict[str, Any]]) -> float:
    """json.loads of the bytes + one bulk_create of the same Tool rows (under another system name), rolled back."""
    from django.db import transaction

    from catalog.models import Tool

    start = time.perf_counter()
    with transaction.atomic():
        json.loads(raw)
        Tool.objects.bulk_create([Tool(**{**row, "system": "floor"}) for row in rows], batch_size=1000)
        elapsed = time.perf_counter() - start
        transaction.set_rollback(True)
    return elapsed


def rows_floor(
    raw: bytes, tools: list[dict[str, Any]], changes: list[dict[str, Any]], findings: list[dict[str, Any]]
) -> float:
    """json.loads of the bytes + bulk_create of every row the import stored, the same values: its Tool rows (under
    another system name), its ToolChange rows (one per tool: the change record a sign-off reviews) and its Finding
    rows, each pointing at the floor's own tools; rolled back. What an importer that keeps the same records must at
    least do; parsing, checking, diffing and linting are what the import adds to it."""
    from django.db import transaction

    from catalog.models import Finding, Tool, ToolChange

    start = time.perf_counter()
    with transaction.atomic():
        json.loads(raw)
        made = Tool.objects.bulk_create(
            [Tool(**{**row, "id": None, "system": "floor"}) for row in tools], batch_size=1000
        )
        pk_of = {row["id"]: tool.pk for row, tool in zip(tools, made, strict=True)}
        ToolChange.objects.bulk_create(
            [ToolChange(**{**row, "id": None, "tool_id": pk_of[row["tool_id"]]}) for row in changes], batch_size=1000
        )
        Finding.objects.bulk_create(
            [
                Finding(**{**row, "id": None, "tool_id": pk_of.get(row["tool_id"]), "system": "floor"})
                for row in findings
            ],
            batch_size=1000,
        )
        elapsed = time.perf_counter() - start
        transaction.set_rollback(True)
    return elapsed


def payloads(n: int) -> dict[str, bytes]:
    manifest = make_manifest(n)
    rebytes = copy.deepcopy(manifest)
    rebytes["source"]["commit"] = "1" * 40
    changed = copy.deepcopy(manifest)
    for tool in changed["tools"][:: max(1, n // 10)][:10]:
        tool["ragDescription"] += " (revised)"
    return {
        name: json.dumps(m).encode() for name, m in (("full", manifest), ("rebytes", rebytes), ("changed", changed))
    }


def one_round(raw: dict[str, bytes], rows: dict[str, list[float]], writes: dict[str, int], counts: list[int]) -> None:
    from django.db import connection

    from catalog.models import CatalogRevision, CatalogState, Finding, Tool, ToolChange
    from catalog.services.imports import catalog_import

    def timed(label: str, payload: bytes) -> Any:
        # Writes are counted by an execute wrapper (Django's public hook), not by capturing queries: a captured
        # query keeps its SQL text with the parameters merged (megabytes per bulk INSERT), which the floor
        # would not pay.
        statements: list[str] = []

        def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            statements.append(sql.lstrip().split(None, 1)[0].upper())
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            start = time.perf_counter()
            result = catalog_import(raw=payload, via="bench")
            rows[label].append(time.perf_counter() - start)
        writes[label] = sum(1 for first in statements if first in {"INSERT", "UPDATE", "DELETE"})
        return result

    CatalogState.objects.all().delete()
    Finding.objects.all().delete()
    ToolChange.objects.all().delete()
    Tool.objects.all().delete()
    CatalogRevision.objects.all().delete()
    timed("full", raw["full"])
    stored = list(Tool.objects.filter(system="condor").values())
    tool_rows = [{k: v for k, v in row.items() if k != "id"} for row in stored]
    rows["full floor"].append(floor(raw["full"], tool_rows))
    changes = list(ToolChange.objects.filter(tool__system="condor").values())
    findings = list(Finding.objects.filter(system="condor").values())
    rows["full rows floor"].append(rows_floor(raw["full"], stored, changes, findings))
    counts[0], counts[1], counts[2] = len(stored), len(changes), len(findings)
    assert timed("identical", raw["full"]).unchanged
    assert timed("same-content", raw["rebytes"]).unchanged
    vectors_store("condor")
    result = timed("10-changed", raw["changed"])
    assert len(result.changed) == 10, result.summary()
    rows["10-changed floor"].append(floor(raw["changed"], tool_rows[:10]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, nargs="+", default=[500, 5000, 50000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rounds-at-50000", type=int, default=1, help="rounds at 50,000 tools and above")
    args = parser.parse_args()

    setup_django()
    import logging
    import os

    from django.db import connection

    from condor_admin.celery import app

    # The import is timed, not the embedding it queues after commit: that is the worker's job (bench/rag_worker.py).
    app.conf.task_always_eager = False  # with no REDIS_URL the broker is in-memory: queued, never run here
    logging.getLogger("condor.import").setLevel(logging.WARNING)
    logging.getLogger("catalog.rag.services.vectors").setLevel(logging.WARNING)

    print(f"import_catalog benchmark: database {connection.vendor}, load average {os.getloadavg()[0]:.2f}")
    print(f"{'tools':>6} {'case':<17} {'median s':>9} {'min s':>7} {'max s':>7} {'vs floor':>8} {'writes':>7}")
    for n in args.tools:
        raw = payloads(n)
        rows: dict[str, list[float]] = {
            k: []
            for k in (
                "full",
                "full floor",
                "full rows floor",
                "identical",
                "same-content",
                "10-changed",
                "10-changed floor",
            )
        }
        writes: dict[str, int] = {}
        counts = [0, 0, 0]
        for _ in range(args.rounds if n < 50000 else args.rounds_at_50000):
            one_round(raw, rows, writes, counts)
        for label, values in rows.items():
            floor_of = rows.get(f"{label} floor")
            ratio = f"{statistics.median(values) / statistics.median(floor_of):7.1f}x" if floor_of else ""
            print(
                f"{n:>6} {label:<17} {statistics.median(values):9.3f} {min(values):7.3f} {max(values):7.3f} "
                f"{ratio:>8} {writes.get(label, ''):>7}"
            )
        full, same_rows = statistics.median(rows["full"]), statistics.median(rows["full rows floor"])
        print(
            f"       full import / the rows floor (its {counts[0]:,} tools, {counts[1]:,} changes and {counts[2]:,} "
            f"findings): {full / same_rows:.1f}x"
        )
        print(f"       manifest {len(raw['full']) / 1e6:.1f} MB; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
