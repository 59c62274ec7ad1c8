"""Benchmark: the hybrid ranking's cost curve, resolution and the index build from 500 to 50,000 tools.

For each N (a fresh database and a fresh process per N): import the synthetic Condor catalog of
bench/import_catalog.py, then write every tool's vector row directly with the ORM instead of embedding 50,000
tools with the model (hours): the whole-text vector and one vector per phrase (as many as `tool_phrases` cuts),
taken cyclically from a pool of real USE vectors of the demo tools' texts and phrases, each with small noise and
re-normalised. The pool is embedded once and kept in bench/out/rag_scale_pool.npz.

Then, through `snapshot_resolve` (profile clinical-production, rag_worker.py's eight prompts, en and de):
  - the full index build: the first resolution after the process starts, and `rag_index` alone with the module's
    caches cleared (`catalog.rag.selectors.index.forget`);
  - the incremental rebuild after ONE tool's vector row changes (a new vector and embedded_at, written with the
    ORM as the worker's upsert does): what a resolution pays once after the worker stored one tool;
  - the index's memory: nbytes of the whole-text matrix, the phrase matrices and the lexical rows, the slot
    table's buffers, the process's peak RSS, and (--tracemalloc) the traced peak of one more full build;
  - an import changing 10 tools' texts, the first resolve after it (the index follows the catalog in place), then
    the first resolve after the worker stored those 10 vectors, each against the warm median (issue 24: within 2×):
    right after the commit with the watcher off (the request makes the update), then with the watcher on and the
    resolve 2.5 s later, beside a resolve after the same pause with nothing changed;
  - warm resolution, median and p90 over >= 48 resolves: with the prompt embedded by the model, and with the
    prompt vector precomputed (`query_vector=`), which leaves the ranking and the snapshot alone; and beside it
    two floors: one cosine's limit (the prompt's embedding and one matrix-vector product over the served
    whole-text vectors) and the hybrid's (the embedding and its three signals scored: the whole-text and lexical
    products, the shortlist and its phrase products);

    .venv/bin/python bench/rag_scale.py --tools 500,5000,20000,50000 [--tracemalloc]
    DATABASE_URL=postgres://… .venv/bin/python bench/rag_scale.py --tools 5000

Uses DATABASE_URL when set (each N flushes it first), else a throw-away SQLite file per N. Results are added to
bench/out/rag_scale.json under "<vendor> <N>".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from _django import setup_django
from _rag import PROMPTS, sign_off
from import_catalog import make_manifest

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "rag_scale.json"
POOL = ROOT / "bench" / "out" / "rag_scale_pool.npz"
POOL_WHOLE, POOL_PHRASES = 300, 600
NOISE = 0.01  # per component: a pooled vector's copy keeps a cosine of about 0.97 with it
ROUNDS = 6  # × 8 prompts = 48 warm resolutions per figure
BATCH = 2000


def pool(embedder: Any) -> tuple[np.ndarray, np.ndarray]:
    """Real vectors: the demo tools' whole texts and their phrases (embedded once, then read from the file)."""
    from catalog.domain.manifest import load_manifest
    from catalog.rag.domain.phrases import tool_phrases
    from catalog.rag.domain.text import embedding_text

    if POOL.exists():
        kept = np.load(POOL)
        if str(kept["model_id"]) == embedder.model_id:
            return kept["whole"], kept["phrases"]
    texts: list[str] = []
    phrases: list[str] = []
    for system in ("condor", "tucan"):
        manifest = load_manifest((ROOT / "catalog" / "demo" / f"{system}.json").read_bytes())
        for t in manifest.tools:
            texts.append(embedding_text(t.rag_description, t.rag_keywords))
            phrases.extend(tool_phrases(t.rag_description, t.rag_keywords).all)
    whole = embedder.embed(list(dict.fromkeys(texts))[:POOL_WHOLE])
    phrase_vectors = embedder.embed(list(dict.fromkeys(phrases))[:POOL_PHRASES])
    POOL.parent.mkdir(parents=True, exist_ok=True)
    np.savez(POOL, whole=whole, phrases=phrase_vectors, model_id=np.array(embedder.model_id))
    return whole, phrase_vectors


def noisy(rng: np.random.Generator, rows: np.ndarray) -> np.ndarray:
    out = rows + rng.normal(0, NOISE, rows.shape).astype(np.float32)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype("<f4")


def write_vectors(model_id: str, whole: np.ndarray, phrases: np.ndarray) -> tuple[int, float]:
    """One ToolEmbedding row per live tool (bulk_create); returns (phrase vectors written, seconds)."""
    from datetime import timedelta

    from django.utils import timezone

    from catalog.models import Tool, ToolEmbedding
    from catalog.rag.domain.phrases import PHRASE_SCHEME, tool_phrases

    rng = np.random.default_rng(20)
    # Stamped as a catalog the worker embedded an hour ago: the index lists the vectors made within its look-back
    # (LOOK_BACK, two minutes) again on every update, which only the minutes after a whole catalog's embedding see.
    earlier = timezone.now() - timedelta(hours=1)
    started = time.perf_counter()
    tools = list(Tool.objects.live().values_list("pk", "rag_description", "rag_keywords", "rag_text_sha256"))
    written = 0
    for start in range(0, len(tools), BATCH):
        objs = []
        for n, (pk, description, keywords, sha) in enumerate(tools[start : start + BATCH], start=start):
            count = len(tool_phrases(description, keywords).all)
            picked = phrases[(np.arange(count) + n * 7) % len(phrases)]
            objs.append(
                ToolEmbedding(
                    tool_id=pk,
                    model_id=model_id,
                    text_sha256=sha,
                    dim=whole.shape[1],
                    vector=noisy(rng, whole[n % len(whole)][None, :])[0].tobytes(),
                    phrases=noisy(rng, picked).tobytes(),
                    phrase_scheme=PHRASE_SCHEME,
                    embedded_at=earlier,
                )
            )
            written += count
        ToolEmbedding.objects.bulk_create(objs)
    return written, time.perf_counter() - started


def clear_index_caches() -> None:
    from catalog.rag.selectors import index

    index.forget()


def index_bytes(model_id: str) -> dict[str, float]:
    """MB held by the served index: the system's slot table (whole-text and phrase vectors, with their room to
    grow) and its lexical rows (the rows, their squares and the by-n-gram transpose)."""
    from catalog.rag.selectors import index as module

    system = module.rag_index(model_id).systems["condor"]
    table = system.table
    assert table is not None
    parts = system.lexical.parts
    lexical = sum(
        m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for p in parts for m in (p.tf, p.squares, p.by_ngram)
    )
    buffers = table.buffers
    return {
        "whole_matrix_mb": system.matrix.nbytes / 1e6,
        "phrase_matrix_mb": (system.phrases.positive.nbytes + system.phrases.negative.nbytes) / 1e6,
        "phrase_vectors": system.phrases.count,
        "lexical_matrices_mb": lexical / 1e6,
        "df_mb": system.lexical.df.nbytes / 1e6,
        "buffers_mb": (buffers.whole.nbytes + buffers.positive.nbytes + buffers.negative.nbytes) / 1e6,
    }


def timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def warm(resolve: Any, vectors: dict[str, np.ndarray] | None) -> dict[str, float]:
    """Median and p90 ms over ROUNDS × the prompts, the prompt vector precomputed when `vectors` is given."""
    times = sorted(
        timed(lambda p=prompt: resolve(p, None if vectors is None else vectors[p]))
        for _ in range(ROUNDS)
        for prompt in PROMPTS
    )
    return {
        "median_ms": round(statistics.median(times), 1),
        "p90_ms": round(times[int(len(times) * 0.9)], 1),
        "n": len(times),
    }


def limit(embedder: Any, matrix: np.ndarray) -> dict[str, float]:
    """What no retrieval can go under: the prompt's embedding and one product of the served whole-text matrix with
    it (no phrases, no shared words, no snapshot), median and p90 over the same prompts and rounds as `warm`."""
    times = sorted(timed(lambda p=prompt: matrix @ embedder.embed([p])[0]) for _ in range(ROUNDS) for prompt in PROMPTS)
    return {"median_ms": round(statistics.median(times), 1), "p90_ms": round(times[int(len(times) * 0.9)], 1)}


def hybrid_floor(embedder: Any, index: Any, row_mask: np.ndarray, shortlist: int) -> dict[str, float]:
    """What no hybrid ranking can go under: the prompt's embedding and its three signals' scoring, nothing else (the
    whole-text product, the lexical product, the shortlist and its phrase products; no fusion, no freshness check,
    no snapshot), with the app's own domain functions, over the same prompts and rounds as `warm`."""
    from catalog.rag.domain.hybrid import _top, phrase_scores

    def once(prompt: str) -> None:
        query = embedder.embed([prompt])[0]
        whole = np.where(row_mask, index.matrix @ query, -np.inf)
        lexical = np.where(row_mask, index.lexical.scores(prompt), -np.inf)
        rows = np.union1d(_top(whole, shortlist), _top(lexical, shortlist))
        phrase_scores(index.phrases, rows, query, 1.0)

    times = sorted(timed(lambda p=prompt: once(p)) for _ in range(ROUNDS) for prompt in PROMPTS)
    return {"median_ms": round(statistics.median(times), 1), "p90_ms": round(times[int(len(times) * 0.9)], 1)}


def bump_one_vector(model_id: str, whole: np.ndarray) -> None:
    """A new vector for one tool, as the worker's upsert writes it (vector and embedded_at)."""
    from django.utils import timezone

    from catalog.models import ToolEmbedding

    rows = ToolEmbedding.objects.filter(model_id=model_id).order_by("pk")
    row = rows[rows.count() // 2]
    vector = noisy(np.random.default_rng(time.monotonic_ns()), whole[:1])[0]
    ToolEmbedding.objects.filter(pk=row.pk).update(vector=vector.tobytes(), embedded_at=timezone.now())


CHANGE_ROUNDS = 3


def after_change(out: dict[str, Any], n: int, model_id: str, whole: np.ndarray, resolve: Any) -> None:
    """CHANGE_ROUNDS times: an import that changes 10 tools' texts, then the first resolve (the index follows the
    catalog: the changed tools lack vectors of their new texts); then the worker's 10 new vectors, and the first
    resolve after them. Medians. First with the watcher off (the first resolve makes the update), then with the
    watcher on and the first resolve WATCH_WAIT later (the watcher made it in between, as between a runtime's
    requests)."""
    from django.conf import settings

    from catalog.rag.selectors.index import stop_watching, watch_from_here

    manifest = make_manifest(n)
    step = max(1, n // 10)
    changed = [manifest["tools"][i]["id"] for i in range(0, n, step)][:10]
    rng = np.random.default_rng(21)
    imports, after_import, after_vectors = change_rounds(manifest, changed, rng, model_id, whole, resolve, 0.0, 0)
    settings.CONDOR_RAG_INDEX_WATCH_SECONDS = WATCH_SECONDS
    watch_from_here(model_id)
    try:
        _, watched_import, watched_vectors = change_rounds(
            manifest, changed, rng, model_id, whole, resolve, WATCH_WAIT, CHANGE_ROUNDS
        )
        idle = []  # the reference: a resolve after the same pause with nothing changed (caches cool in a pause too)
        for prompt in PROMPTS[2:4] * CHANGE_ROUNDS:
            time.sleep(WATCH_WAIT)
            idle.append(timed(lambda p=prompt: resolve(p, None)))
    finally:
        stop_watching()
        settings.CONDOR_RAG_INDEX_WATCH_SECONDS = 0
    out["change_import_s"] = round(statistics.median(imports), 1)
    warm_ms = out["warm_embedded"]["median_ms"]
    for key, found in (
        ("first_after_import", after_import),
        ("first_after_vectors", after_vectors),
        ("watched_after_import", watched_import),
        ("watched_after_vectors", watched_vectors),
        ("idle", idle),
    ):
        out[f"{key}_ms"] = round(statistics.median(found), 1)
        out[f"{key}_x"] = round(out[f"{key}_ms"] / warm_ms, 1)
    out["first_after_rounds_ms"] = [[round(a), round(b)] for a, b in zip(after_import, after_vectors, strict=True)]


WATCH_SECONDS = 1.0  # the default CONDOR_RAG_INDEX_WATCH_SECONDS
WATCH_WAIT = 2.5  # seconds between the commit and the first resolve when the watcher runs


def change_rounds(
    manifest: dict[str, Any],
    changed: list[str],
    rng: np.random.Generator,
    model_id: str,
    whole: np.ndarray,
    resolve: Any,
    wait: float,
    first_round: int,
) -> tuple[list[float], list[float], list[float]]:
    """CHANGE_ROUNDS imports of 10 changed texts, each followed (`wait` s later) by a resolve, then their vectors
    and (`wait` s later) another: the import seconds and the two resolves' ms."""
    from django.db import transaction

    from catalog.models import Tool, ToolEmbedding
    from catalog.rag.domain.phrases import PHRASE_SCHEME
    from catalog.services.imports import catalog_import

    imports, after_import, after_vectors = [], [], []
    for round_number in range(first_round, first_round + CHANGE_ROUNDS):
        for tool in manifest["tools"]:
            if tool["id"] in changed:
                tool["ragDescription"] += f" Revised {round_number}."
        started = time.perf_counter()
        catalog_import(raw=json.dumps(manifest).encode(), via="bench")
        imports.append(time.perf_counter() - started)
        time.sleep(wait)
        after_import.append(timed(lambda: resolve(PROMPTS[2], None)))
        with transaction.atomic():  # as the worker's upsert: the tool's old vectors replaced by its new text's
            for pk, sha in Tool.objects.live().filter(declared_id__in=changed).values_list("pk", "rag_text_sha256"):
                ToolEmbedding.objects.filter(tool_id=pk, model_id=model_id).delete()
                ToolEmbedding.objects.create(
                    tool_id=pk,
                    model_id=model_id,
                    text_sha256=sha,
                    dim=whole.shape[1],
                    vector=noisy(rng, whole[:1])[0].tobytes(),
                    phrases=b"",
                    phrase_scheme=PHRASE_SCHEME,
                )
        time.sleep(wait)
        after_vectors.append(timed(lambda: resolve(PROMPTS[3], None)))
    return imports, after_import, after_vectors


def measure(n: int, trace: bool) -> dict[str, Any]:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from catalog.rag.embedders import configured_model_id, get_embedder
    from catalog.rag.selectors.index import rag_index
    from catalog.rag.selectors.resolution import snapshot_resolve
    from catalog.services.imports import catalog_import
    from condor_admin.celery import app

    if connection.vendor == "postgresql":
        # The audit tables' trigger (migration 0014) lets a TRUNCATE through only where a session asks for it:
        # this throw-away benchmark database, as bench/governance.py does.
        with connection.cursor() as cursor:
            cursor.execute("SET condor.allow_audit_truncate = 'on'")
    call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)  # the flush took the seeded floors and roles with it
    app.conf.task_always_eager = False  # the import queues (in memory); this script writes the vectors itself
    settings.CONDOR_RAG_INDEX_WATCH_SECONDS = 0  # no watcher but in after_change's second half
    out: dict[str, Any] = {"tools": n, "database": connection.vendor, "load_avg_1m": [round(os.getloadavg()[0], 1)]}
    started = time.perf_counter()
    revision = catalog_import(raw=json.dumps(make_manifest(n)).encode(), via="bench").revision
    out["import_s"] = round(time.perf_counter() - started, 1)
    assert revision is not None
    sign_off(revision.pk)  # clinical-production retrieves over what is in effect
    embedder = get_embedder()
    model_id = configured_model_id()
    whole, phrases = pool(embedder)
    out["phrase_vectors_written"], seconds = write_vectors(model_id, whole, phrases)
    out["vectors_write_s"] = round(seconds, 1)
    prompt_vectors = dict(zip(PROMPTS, embedder.embed(PROMPTS), strict=True))

    def resolve(prompt: str, vector: np.ndarray | None) -> Any:
        return snapshot_resolve(prompt=prompt, profile="clinical-production", query_vector=vector)

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["first_resolve_s"] = round(timed(lambda: resolve(PROMPTS[0], None)) / 1000, 2)
    out["peak_rss_mb"] = [round(rss_before), round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)]
    snapshot = resolve(PROMPTS[1], None)
    out["ranked"], out["top3"] = len(snapshot.ranking), snapshot.tool_ids[:3]
    assert snapshot.ranking, "the clinical profile ranked nothing: is the revision in effect?"
    out["memory"] = {k: round(v, 1) if isinstance(v, float) else v for k, v in index_bytes(model_id).items()}
    out["warm_embedded"] = warm(resolve, None)
    out["warm_precomputed"] = warm(resolve, prompt_vectors)
    out["limit"] = limit(embedder, rag_index(model_id).in_effect["condor"].matrix)
    out["resolve_over_limit"] = round(out["warm_embedded"]["median_ms"] / out["limit"]["median_ms"], 2)
    served = rag_index(model_id).in_effect["condor"]
    mask = served.eligibility(rag_index(model_id).profiles["clinical-production"])[1]
    out["hybrid_floor"] = hybrid_floor(embedder, served, mask, settings.CONDOR_RAG_SHORTLIST)
    out["resolve_over_hybrid_floor"] = round(out["warm_embedded"]["median_ms"] / out["hybrid_floor"]["median_ms"], 2)
    clear_index_caches()
    out["full_build_s"] = round(timed(lambda: rag_index(model_id)) / 1000, 2)
    rebuilds = []
    for _ in range(3):
        bump_one_vector(model_id, whole)
        rebuilds.append(timed(lambda: rag_index(model_id)) / 1000)
    out["incremental_rebuild_s"] = round(statistics.median(rebuilds), 2)
    out["incremental_rebuilds_s"] = [round(s, 2) for s in rebuilds]
    after_change(out, n, model_id, whole, resolve)
    if trace:
        clear_index_caches()
        tracemalloc.start()
        rag_index(model_id)
        out["tracemalloc_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 1e6, 1)
        tracemalloc.stop()
    out["shortlist"] = settings.CONDOR_RAG_SHORTLIST
    out["fusion"] = settings.CONDOR_RAG_FUSION
    out["load_avg_1m"].append(round(os.getloadavg()[0], 1))
    out["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    return out


def table(r: dict[str, Any]) -> str:
    m = r["memory"]
    rows = [
        ("import (s)", r["import_s"]),
        (
            "vector rows written with the ORM (s; phrase vectors)",
            f"{r['vectors_write_s']} ({r['phrase_vectors_written']:,})",
        ),
        ("first resolve after process start: full build + resolve (s)", r["first_resolve_s"]),
        ("full build, caches cleared (s)", r["full_build_s"]),
        ("rebuild after one tool's vector changed (s; median of 3)", r["incremental_rebuild_s"]),
        (
            "resolve warm, prompt embedded: median / p90 ms",
            f"{r['warm_embedded']['median_ms']} / {r['warm_embedded']['p90_ms']}",
        ),
        (
            "its limit: prompt embedded + one matrix-vector product, median / p90 ms (resolve / limit)",
            f"{r['limit']['median_ms']} / {r['limit']['p90_ms']} ({r['resolve_over_limit']}×)",
        ),
        (
            "the hybrid's floor: prompt embedded + its three signals scored, median / p90 ms (resolve / floor)",
            f"{r['hybrid_floor']['median_ms']} / {r['hybrid_floor']['p90_ms']} ({r['resolve_over_hybrid_floor']}×)",
        ),
        (
            "resolve warm, prompt vector given: median / p90 ms",
            f"{r['warm_precomputed']['median_ms']} / {r['warm_precomputed']['p90_ms']}",
        ),
        (
            "index MB: whole matrix / phrase matrices / lexical (rows and by n-gram)",
            f"{m['whole_matrix_mb']} / {m['phrase_matrix_mb']} / {m['lexical_matrices_mb']}",
        ),
        ("slot table buffers MB (with room to grow)", m["buffers_mb"]),
        ("import changing 10 tools' texts (s; median of 3)", r["change_import_s"]),
        (
            "first resolve after that import / after the worker stored their 10 vectors (ms; median of 3)",
            f"{r['first_after_import_ms']} / {r['first_after_vectors_ms']}",
        ),
        (
            "the same over a warm resolve (× the warm median, prompt embedded)",
            f"{r['first_after_import_x']}× / {r['first_after_vectors_x']}×",
        ),
        (
            f"with the watcher ({WATCH_SECONDS:g} s), {WATCH_WAIT:g} s after the import / the vectors (ms; × warm)",
            f"{r['watched_after_import_ms']} / {r['watched_after_vectors_ms']} "
            f"({r['watched_after_import_x']}× / {r['watched_after_vectors_x']}×)",
        ),
        (
            f"a resolve {WATCH_WAIT:g} s after nothing changed (ms; × warm): the same pause's own cost",
            f"{r['idle_ms']} ({r['idle_x']}×)",
        ),
        ("peak RSS MB before → after the first build", f"{r['peak_rss_mb'][0]} → {r['peak_rss_mb'][1]}"),
    ]
    if "tracemalloc_peak_mb" in r:
        rows.append(("traced peak of a full build (MB)", r["tracemalloc_peak_mb"]))
    rows.append(("1-min load average before → after", f"{r['load_avg_1m'][0]} → {r['load_avg_1m'][1]}"))
    head = f"### {r['tools']:,} tools on {r['database']} ({m['phrase_vectors']:,} phrase vectors; {r['measured_at']})"
    return "\n".join([head, "", "| | |", "|---|---|", *(f"| {label} | {value} |" for label, value in rows)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", default="500,5000,20000,50000", help="comma-separated tool counts")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace one more full build's peak")
    args = parser.parse_args()
    counts = [int(c) for c in args.tools.split(",")]
    if len(counts) > 1:  # one process (and one database) per N: the first resolution is a true cold build
        for n in counts:
            extra = ["--tracemalloc"] if args.tracemalloc else []
            subprocess.run([sys.executable, __file__, "--tools", str(n), *extra], check=True)
        return
    setup_django()
    result = measure(counts[0], args.tracemalloc)
    stored = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    stored[f"{result['database']} {result['tools']}"] = result
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(stored, indent=1), encoding="utf-8")
    print(table(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
