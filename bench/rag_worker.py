"""Benchmark: the embedding worker's work on a large catalog, sibling collisions, and resolution latency.

On the synthetic 5,000-tool Condor catalog of bench/import_catalog.py: embed every tool in worker-sized batches
(texts/s), find sibling near-duplicates blockwise (seconds and peak memory, against the 5,000 × 5,000 float64
matrix the issue forbids: 200 MB), and resolve prompts (median and p90 ms, warm, under
the clinical profile: the imported revision is signed off first, so its tools are in effect).

    .venv/bin/python bench/rag_worker.py [--tools 5000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc

from _django import setup_django
from import_catalog import make_manifest

PROMPTS = [
    "Blutdruck und Puls eintragen",
    "show the medication list",
    "Termin nächste Woche bei Dr. Roth",
    "write the discharge letter",
    "Rechnung für heute erstellen",
    "which allergies are on file",
    "Laborwerte von gestern",
    "record a clinical note",
]


def sign_off(revision_pk: int) -> None:
    """Two safety officers approve the revision: clinical profiles (clinical-production) retrieve only over what
    is in effect, and a catalog never signed off has nothing in effect, so resolution would rank nothing."""
    from django.contrib.auth.models import Group, User

    from catalog.core import roles
    from catalog.services.signoff import revision_review

    group = Group.objects.get_or_create(name=roles.SAFETY_OFFICER)[0]
    for i in range(2):
        officer = User.objects.create(username=f"bench-officer{i}")
        officer.groups.add(group)
        revision_review(revision_id=revision_pk, reviewer=officer, decision="approved", comment="bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=5000)
    args = parser.parse_args()
    setup_django()
    from django.conf import settings

    from catalog.models import Tool
    from catalog.rag.domain.siblings import near_duplicate_pairs
    from catalog.rag.embedders import get_embedder
    from catalog.rag.selectors.resolution import snapshot_resolve
    from catalog.rag.selectors.vectors import current_vectors, tools_needing_vectors
    from catalog.rag.services.vectors import batches, embeddings_refresh
    from catalog.services.imports import catalog_import
    from condor_admin.celery import app

    app.conf.task_always_eager = False  # the import queues (in memory); this script does the worker's part
    revision = catalog_import(raw=json.dumps(make_manifest(args.tools)).encode(), via="bench").revision
    assert revision is not None
    sign_off(revision.pk)
    embedder = get_embedder()
    embedder.embed(["warm up"])
    ids = tools_needing_vectors()
    start = time.perf_counter()
    for chunk in batches(ids):
        embeddings_refresh(chunk, embedder=embedder)
    embed_s = time.perf_counter() - start
    print(
        f"{len(ids)} tools embedded with {embedder.model_id} in batches of {settings.CONDOR_EMBED_BATCH}: "
        f"{embed_s:.1f} s ({len(ids) / embed_s:.0f} texts/s)"
    )
    start = time.perf_counter()
    assert not tools_needing_vectors()
    print(f"re-check of {Tool.objects.count()} tools (nothing to do): {(time.perf_counter() - start) * 1000:.0f} ms")

    pks, matrix = current_vectors("condor")
    names = [str(pk) for pk in pks]
    tracemalloc.start()
    start = time.perf_counter()
    pairs = near_duplicate_pairs(names, matrix, settings.CONDOR_SIBLING_THRESHOLD)
    sib_s = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    dense = len(pks) * len(pks) * 8
    print(
        f"sibling pairs over {len(pks)} vectors (threshold {settings.CONDOR_SIBLING_THRESHOLD}): {len(pairs)} pairs "
        f"in {sib_s:.2f} s, peak {peak / 1e6:.1f} MB traced (a dense float64 matrix: {dense / 1e6:.0f} MB)"
    )

    ranked = len(snapshot_resolve(prompt="warm", profile="clinical-production").ranking)
    assert ranked, "the clinical profile ranked nothing: is the revision in effect?"
    times = []
    for _ in range(5):
        for prompt in PROMPTS:
            start = time.perf_counter()
            snapshot_resolve(prompt=prompt, profile="clinical-production")
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(
        f"resolve over {len(pks)} tools, warm: median {statistics.median(times):.1f} ms, "
        f"p90 {times[int(len(times) * 0.9)]:.1f} ms ({len(times)} prompts; {ranked} tools in each ranking)"
    )


if __name__ == "__main__":
    main()
