"""Benchmark: a large import and everything it sets off, until the catalog is whole again.

One round on a fresh database (DATABASE_URL, else a throw-away SQLite file) with the worker's tasks run
in-process after commit, exactly as `make run` runs them (the task path: batches of CONDOR_EMBED_BATCH through
`embed_tools`, then the sibling findings):
  - import: parse, diff, write the tools, their findings and the revision (one transaction),
  - follow-on: embed every tool through the task path and refresh the sibling findings,
  - the process's peak resident memory.
Two sizes side by side (default 5,000 and 20,000 tools) show how the cost grows. `--at-caps N` first imports N
tools whose every text is at its manifest bound (TOOLS.md, "Bounds") and reports the peak memory of embedding
them, in a process of its own so that no earlier round's peak hides it.

    .venv/bin/python bench/large_import.py [--tools 5000 20000] [--at-caps 250]
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _django import setup_django  # noqa: E402
from import_catalog import make_manifest  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def at_caps(n: int) -> dict[str, Any]:
    """A manifest of `n` tools with every text at its bound: the largest input the embedder can be given."""
    from catalog.domain.manifest.base import (
        DESCRIPTION_MAX,
        FRAGMENT_MAX,
        KEYWORD_LANGUAGES_MAX,
        KEYWORD_MAX,
        KEYWORDS_MAX,
    )

    manifest = make_manifest(n)
    words = "Medikation verordnen prescribe the medication for the patient in context "
    for i, tool in enumerate(manifest["tools"]):
        tool["ragDescription"] = (f"Tool {i}: " + words * DESCRIPTION_MAX)[:DESCRIPTION_MAX]
        tool["instructionFragment"] = ("Confirm first. " * FRAGMENT_MAX)[:FRAGMENT_MAX]
        languages = ["en", "de", "fr", "it", "es", "nl", "pt", "pl", "cs", "da", "sv", "fi", "nb", "hu", "ro", "el"]
        tool["ragKeywords"] = {
            lang: [(f"{lang} {i} {k} " + words * 2)[:KEYWORD_MAX] for k in range(KEYWORDS_MAX)]
            for lang in languages[:KEYWORD_LANGUAGES_MAX]
        }
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--at-caps", type=int, default=0, help="tools at the bounds, measured alone")
    args = parser.parse_args()
    setup_django()
    for noisy in ("celery", "catalog.rag.services.vectors", "condor.import", "condor.audit"):
        logging.getLogger(noisy).setLevel(logging.WARNING)  # a line per step, batch and seal otherwise
    from django.db import connection

    from catalog.models import CatalogRevision, CatalogState, Finding, Tool, ToolChange, ToolEmbedding
    from catalog.rag import tasks as rag_tasks
    from catalog.rag.services import siblings
    from catalog.services.imports import catalog_import
    from condor_admin.celery import app

    app.conf.task_always_eager = True  # the in-process worker path of `make run`
    spent: dict[str, float] = {"embed": 0.0, "siblings": 0.0}
    calls = {"siblings": 0}

    def timed(name: str, fn: Any) -> Any:
        def run(*a: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] += time.perf_counter() - start
                calls[name] = calls.get(name, 0) + 1

        return run

    rag_tasks.embeddings_refresh = timed("embed", rag_tasks.embeddings_refresh)
    # Where the task path calls it: the task module before the findings waited for a system's last batch.
    owner = rag_tasks if hasattr(rag_tasks, "sibling_findings_refresh") else siblings
    owner.sibling_findings_refresh = timed("siblings", siblings.sibling_findings_refresh)

    if args.at_caps:
        raw = json.dumps(at_caps(args.at_caps)).encode()
        before = peak_mb()
        start = time.perf_counter()
        catalog_import(raw=raw, via="bench")
        print(
            f"{args.at_caps} tools at the bounds ({len(raw) / 1e6:.1f} MB manifest): imported and embedded in "
            f"{time.perf_counter() - start:.1f} s; peak memory {peak_mb():.0f} MB ({before:.0f} MB before)"
        )
        return
    print(f"large import benchmark: database {connection.vendor}, tasks in-process (the `make run` worker path)")
    header = ("tools", "import s", "embed s", "siblings s", "refreshes", "total s", "peak MB")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (7, 9, 8, 11, 10, 8, 8), strict=True)))
    for n in args.tools:
        for model in (CatalogState, ToolEmbedding, Finding, ToolChange, Tool, CatalogRevision):
            model.objects.all().delete()
        spent.update(embed=0.0, siblings=0.0)
        calls["siblings"] = 0
        raw = json.dumps(make_manifest(n)).encode()
        start = time.perf_counter()
        result = catalog_import(raw=raw, via="bench")  # on-commit tasks run inside this call
        total = time.perf_counter() - start
        assert len(result.added) == n, result.summary()
        embedded = ToolEmbedding.objects.count()
        assert embedded >= Tool.objects.filter(rag_text_sha256__gt="").count(), embedded
        follow = spent["embed"] + spent["siblings"]
        print(
            f"{n:>7} {total - follow:9.1f} {spent['embed']:8.1f} {spent['siblings']:11.1f} "
            f"{calls['siblings']:>10} {total:8.1f} {peak_mb():8.0f}"
        )


if __name__ == "__main__":
    main()
