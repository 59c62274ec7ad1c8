"""Sibling collisions computed blockwise agree with the dense computation."""

from __future__ import annotations

import numpy as np

from catalog.rag.domain.siblings import near_duplicate_pairs


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
