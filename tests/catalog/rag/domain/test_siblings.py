"""Sibling collisions computed blockwise agree with the dense computation."""

from __future__ import annotations

import numpy as np

from catalog.rag.domain.siblings import near_duplicate_pairs, sibling_delta


def test_blockwise_pairs_equal_the_dense_upper_triangle() -> None:
    rng = np.random.default_rng(7)
    base = rng.normal(size=(40, 16)).astype(np.float32)
    vectors = np.vstack([base, base[:10] + rng.normal(scale=0.05, size=(10, 16)).astype(np.float32)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"t{i}" for i in range(len(vectors))]
    dense = vectors @ vectors.T
    expected = {(ids[i], ids[j]) for i in range(len(ids)) for j in range(i + 1, len(ids)) if dense[i, j] >= 0.9}
    for block_rows in (1, 7, 64):
        pairs = near_duplicate_pairs(ids, vectors, 0.9, block_rows=block_rows, max_per_tool=len(ids))
        assert {(a, b) for a, b, _ in pairs} == expected
    assert len(expected) >= 10  # the ten planted near-copies at least


def test_no_pairs_below_the_threshold_or_for_a_single_tool() -> None:
    vectors = np.eye(3, dtype=np.float32)
    assert near_duplicate_pairs(["a", "b", "c"], vectors, 0.5) == []
    assert near_duplicate_pairs(["a"], vectors[:1], 0.5) == []


def test_each_tool_names_at_most_its_closest_siblings() -> None:
    """Fifty templated tools that all collide: a handful of findings per tool, not 1,225 pairs."""
    rng = np.random.default_rng(3)
    base = rng.normal(size=16).astype(np.float32)
    vectors = base + rng.normal(scale=0.01, size=(50, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"t{i}" for i in range(50)]
    pairs = near_duplicate_pairs(ids, vectors, 0.9, block_rows=8, max_per_tool=3)
    assert 50 * 3 / 2 <= len(pairs) <= 50 * 3
    named = {t: 0 for t in ids}
    for a, b, _ in pairs:
        named[a] += 1
        named[b] += 1
    assert min(named.values()) >= 3  # every tool still names its three closest
    dense = vectors @ vectors.T
    for a, b, cosine in pairs:
        assert abs(dense[int(a[1:]), int(b[1:])] - cosine) < 1e-3


def clustered(rng: np.random.Generator, n: int, clusters: int) -> np.ndarray:
    """n unit vectors in tight clusters of various sizes (templated tools), so a tool often has more than three
    colliding siblings and `max_per_tool` decides which it names."""
    centres = rng.normal(size=(clusters, 16)).astype(np.float32)
    vectors = centres[rng.integers(0, clusters, size=n)] + rng.normal(scale=0.03, size=(n, 16)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def incremental(before: np.ndarray, after: np.ndarray, changed: set[int]) -> set[tuple[int, int, float]]:
    """What the worker stores: the pairs from before minus those the import drops (a changed tool's), then the
    delta over the changed tools and the partners of the dropped pairs (which the import marks)."""
    ids = [str(i) for i in range(len(before))]
    old = {(int(a), int(b)) for a, b, _ in near_duplicate_pairs(ids, before, 0.9)}
    kept = {(a, b) for a, b in old if a not in changed and b not in changed}
    partners = {x for a, b in old - kept for x in (a, b)}
    delta = sibling_delta(after, changed | partners, kept, 0.9, block_rows=5)
    untouched = {(a, b, round(float(after[a] @ after[b]), 4)) for a, b in kept}
    untouched = {p for p in untouched if p[0] not in delta.affected and p[1] not in delta.affected}
    return untouched | set(delta.pairs)


def test_an_incremental_refresh_finds_what_a_full_recompute_finds() -> None:
    for seed in range(12):
        rng = np.random.default_rng(seed)
        before = clustered(rng, 80, 9)
        after = before.copy()
        changed = {int(i) for i in rng.choice(80, size=int(rng.integers(1, 6)), replace=False)}
        for i in changed:  # a changed tool joins another cluster, leaves all, or stays put
            after[i] = before[int(rng.integers(0, 80))] if seed % 3 else rng.normal(size=16).astype(np.float32)
            after[i] += rng.normal(scale=0.03, size=16).astype(np.float32)
            after[i] /= np.linalg.norm(after[i])
        ids = [str(i) for i in range(80)]
        full = {(int(a), int(b), c) for a, b, c in near_duplicate_pairs(ids, after, 0.9)}
        assert incremental(before, after, changed) == full, seed


def test_a_change_of_two_tools_scores_two_rows_and_their_siblings_not_every_row() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(300, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[11] = vectors[10]  # one planted near-duplicate pair
    delta = sibling_delta(vectors, {10, 200}, [], 0.9)
    assert delta.rows_scored == 3  # tools 10 and 200, and tool 11 (10's sibling): a 3 × 300 product
    assert delta.affected == {10, 11, 200}
    assert [(i, j) for i, j, _ in delta.pairs] == [(10, 11)]
