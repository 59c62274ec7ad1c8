"""Benchmark: the embedding worker's task path against the raw embedder on the same texts (issue 24).

On the synthetic Condor catalog of bench/import_catalog.py (imported once, its tasks not run): alternating rounds of

- raw: the embedder alone on every text the worker embeds (each tool's text and its phrases), in batches of
  CONDOR_EMBED_BATCH — the floor of the job;
- worker: every vector deleted, then `embed_tools` applied per batch as the import enqueues them (Celery's task
  path, in process: the same code a worker runs, with the sibling refresh the last batch schedules), seconds per
  batch (first and last) and the process's resident memory after each round.

    .venv/bin/python bench/rag_worker.py [--tools 5000] [--rounds 3] [--embedder real|cheap]

`--embedder cheap`: a deterministic hashing embedder (numpy only) for 50,000 tools, where the real one would take
hours per round; the ratio worker / raw is what the figure is about.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from collections.abc import Sequence

import numpy as np
from _django import setup_django
from import_catalog import make_manifest


class CheapEmbedder:
    """Deterministic unit vectors from each text's hash: the same cost for every text, no model."""

    model_id = "bench-cheap-384"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        seeds = [int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little") for t in texts]
        rows = np.vstack([np.random.default_rng(s).standard_normal(384, dtype=np.float32) for s in seeds])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedder", choices=("real", "cheap"), default="real")
    args = parser.parse_args()
    setup_django()
    from django.conf import settings

    # DEBUG keeps every query's text (a batch's upsert carries 64 vectors of 16 KB as literals): memory that
    # grows per batch and is no worker's (a deployed worker runs with DEBUG off). Read per cursor, so this holds.
    settings.DEBUG = False
    from catalog.models import Finding, ToolEmbedding
    from catalog.rag import embedders
    from catalog.rag.domain.phrases import tool_phrases
    from catalog.rag.domain.text import embedding_text
    from catalog.rag.selectors.vectors import embeddable_tools, tools_needing_vectors
    from catalog.rag.services import vectors
    from catalog.rag.tasks import embed_tools
    from catalog.services.imports import catalog_import
    from condor_admin.celery import app

    embedder = CheapEmbedder() if args.embedder == "cheap" else embedders.get_embedder()
    embedders.get_embedder = vectors.get_embedder = lambda: embedder  # type: ignore[assignment]
    embedders.configured_model_id = lambda: embedder.model_id  # type: ignore[assignment]
    import catalog.rag.selectors.siblings as sibling_selectors
    import catalog.rag.selectors.vectors as vector_selectors
    import catalog.rag.services.siblings as sibling_services
    import catalog.rag.tasks as tasks

    # Every module that asks for the configured model (the sibling selectors too: without them the refresh read
    # the real model's vectors, found none, and the 50,000-tool figure left out the N × N product).
    for module in (sibling_selectors, vector_selectors, sibling_services, tasks):
        module.configured_model_id = lambda: embedder.model_id  # type: ignore[attr-defined]
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor == "postgresql":  # a fresh catalog of `--tools` tools (as bench/rag_scale.py does)
        with connection.cursor() as cursor:
            cursor.execute("SET condor.allow_audit_truncate = 'on'")
    call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    app.conf.task_always_eager = False  # the import's own enqueue goes nowhere: the rounds below do the work
    catalog_import(raw=json.dumps(make_manifest(args.tools)).encode(), via="bench")
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True  # apply_async of the refresh runs here
    embedder.embed(["warm up"])
    rows = embeddable_tools().order_by("pk").values_list("pk", "rag_description", "rag_keywords")
    texts = [p for _, d, k in rows for p in (embedding_text(d, k), *tool_phrases(d, k).all)]
    batch = vectors.settings.CONDOR_EMBED_BATCH
    raw_s, worker_s, mem, per_batch = [], [], [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        tools_per_batch = len(texts) // max(1, len(rows)) or 1
        for i in range(0, len(texts), batch * tools_per_batch):
            embedder.embed(texts[i : i + batch * tools_per_batch])
        raw_s.append(time.perf_counter() - start)
        ToolEmbedding.objects.all().delete()
        Finding.objects.filter(rule="sibling-near-duplicate").delete()
        ids = tools_needing_vectors()
        times = []
        start = time.perf_counter()
        for chunk in vectors.batches(ids):
            t = time.perf_counter()
            embed_tools.apply(args=(chunk,), throw=True)
            times.append(time.perf_counter() - t)
        worker_s.append(time.perf_counter() - start)
        per_batch.append((times[0], statistics.median(times), times[-1]))
        mem.append(rss_mb())
    assert not tools_needing_vectors()
    raw, worker = statistics.median(raw_s), statistics.median(worker_s)
    print(f"{args.tools} tools, {len(texts)} texts, {embedder.model_id}, batches of {batch}, {args.rounds} rounds")
    print(f"raw embedder: median {raw:.2f} s (spread {min(raw_s):.2f}-{max(raw_s):.2f})")
    print(
        f"worker task path: median {worker:.2f} s (spread {min(worker_s):.2f}-{max(worker_s):.2f}); "
        f"{worker / raw:.2f}x raw"
    )
    print("per batch first / median / last (s): " + "; ".join(f"{a:.3f} / {m:.3f} / {z:.3f}" for a, m, z in per_batch))
    print("resident MB after each round: " + ", ".join(f"{m:.0f}" for m in mem))
    print(f"sibling findings: {Finding.objects.filter(rule='sibling-near-duplicate').count()}; load {os.getloadavg()}")


if __name__ == "__main__":
    main()
