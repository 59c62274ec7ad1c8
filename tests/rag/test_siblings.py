"""Sibling collisions computed blockwise agree with the dense computation."""

from __future__ import annotations

import numpy as np

from catalog.rag.siblings import near_duplicate_pairs


def test_blockwise_pairs_equal_the_dense_upper_triangle() -> None:
    rng = np.random.default_rng(7)
    base = rng.normal(size=(40, 16)).astype(np.float32)
    vectors = np.vstack([base, base[:10] + rng.normal(scale=0.05, size=(10, 16)).astype(np.float32)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"t{i}" for i in range(len(vectors))]
    dense = vectors @ vectors.T
    expected = {(ids[i], ids[j]) for i in range(len(ids)) for j in range(i + 1, len(ids)) if dense[i, j] >= 0.9}
    for block_rows in (1, 7, 64):
        pairs = near_duplicate_pairs(ids, vectors, 0.9, block_rows=block_rows)
        assert {(a, b) for a, b, _ in pairs} == expected
    assert len(expected) >= 10  # the ten planted near-copies at least


def test_no_pairs_below_the_threshold_or_for_a_single_tool() -> None:
    vectors = np.eye(3, dtype=np.float32)
    assert near_duplicate_pairs(["a", "b", "c"], vectors, 0.5) == []
    assert near_duplicate_pairs(["a"], vectors[:1], 0.5) == []
