"""Resolution latency at N tools, runnable on both checkouts (before and after the hybrid ranking).

Import the synthetic catalog, sign it off (clinical-production retrieves over what is in effect), write every
tool's vector row with the ORM from a pool of real USE vectors (rag_scale.py's pool file; with phrase vectors
where the model has them), then resolve rag_worker.py's eight prompts: the first resolution (the index build),
then ROUNDS × 8 warm with the prompt embedded and ROUNDS × 8 with the prompt vector given.

    .venv/bin/python bench/rag_resolve_ab.py --tools 5000 [--pool FILE]
    .venv/bin/python bench/side_by_side.py --old ../old --rounds 3 \
        "rag_resolve_ab.py --tools 5000 --pool $PWD/bench/out/rag_scale_pool.npz"

(side_by_side runs each checkout's own copy: put this file into the old checkout's bench/ for the run.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from _django import setup_django
from _rag import PROMPTS  # the same eight prompts
from import_catalog import make_manifest

# The pool of real USE vectors bench/rag_scale.py embeds once; both checkouts read the same file (--pool), so old
# and new rank the same vectors.
POOL = str(Path(__file__).resolve().parent / "out" / "rag_scale_pool.npz")
ROUNDS = 6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--pool", default=POOL, help="the vector pool (.npz) bench/rag_scale.py writes")
    args = parser.parse_args()
    setup_django()
    from django.contrib.auth.models import Group, User

    from catalog.core import roles
    from catalog.models import Tool, ToolEmbedding
    from catalog.rag.embedders import configured_model_id, get_embedder
    from catalog.rag.selectors.resolution import snapshot_resolve
    from catalog.services.imports import catalog_import
    from catalog.services.signoff import revision_review
    from condor_admin.celery import app

    try:  # only the hybrid checkout has phrase vectors
        from catalog.rag.domain.phrases import PHRASE_SCHEME, tool_phrases
    except ImportError:
        tool_phrases = None

    app.conf.task_always_eager = False
    revision = catalog_import(raw=json.dumps(make_manifest(args.tools)).encode(), via="bench").revision
    group = Group.objects.get_or_create(name=roles.SAFETY_OFFICER)[0]
    for i in range(2):
        officer = User.objects.create(username=f"ab-officer{i}")
        officer.groups.add(group)
        revision_review(revision_id=revision.pk, reviewer=officer, decision="approved", comment="bench")
    pool = np.load(args.pool)
    whole, phrases = pool["whole"], pool["phrases"]
    rng = np.random.default_rng(20)

    def noisy(rows: np.ndarray) -> np.ndarray:
        out = rows + rng.normal(0, 0.01, rows.shape).astype(np.float32)
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype("<f4")

    model_id = configured_model_id()
    objs = []
    for n, (pk, description, keywords, sha) in enumerate(
        Tool.objects.live().values_list("pk", "rag_description", "rag_keywords", "rag_text_sha256")
    ):
        fields = {"vector": noisy(whole[n % len(whole)][None, :])[0].tobytes()}
        if tool_phrases is not None:
            count = len(tool_phrases(description, keywords).all)
            fields["phrases"] = noisy(phrases[(np.arange(count) + n * 7) % len(phrases)]).tobytes()
            fields["phrase_scheme"] = PHRASE_SCHEME
        objs.append(ToolEmbedding(tool_id=pk, model_id=model_id, text_sha256=sha, dim=whole.shape[1], **fields))
    ToolEmbedding.objects.bulk_create(objs, batch_size=2000)
    embedder = get_embedder()
    vectors = dict(zip(PROMPTS, embedder.embed(PROMPTS), strict=True))

    def ms(prompt: str, vector: np.ndarray | None) -> float:
        start = time.perf_counter()
        snapshot = snapshot_resolve(prompt=prompt, profile="clinical-production", query_vector=vector)
        assert snapshot.ranking, "nothing ranked"
        return (time.perf_counter() - start) * 1000

    print(f"first resolve (index build) {ms(PROMPTS[0], None):.0f} ms")
    for label, given in (("prompt embedded", False), ("prompt vector given", True)):
        times = sorted(ms(p, vectors[p] if given else None) for _ in range(ROUNDS) for p in PROMPTS)
        print(
            f"resolve over {args.tools} tools, warm, {label}: median {statistics.median(times):.1f} ms, "
            f"p90 {times[int(len(times) * 0.9)]:.1f} ms ({len(times)} prompts)"
        )


if __name__ == "__main__":
    main()
