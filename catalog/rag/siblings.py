"""Sibling near-duplicates: pairs of one system's tools whose vectors are too close to tell apart.

Computed blockwise: 5,000 tools never need a 5,000 × 5,000 matrix at once (a block of rows against all
columns, float32, upper triangle only).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BLOCK_ROWS = 512


def near_duplicate_pairs(
    ids: Sequence[str], vectors: np.ndarray, threshold: float, *, block_rows: int = BLOCK_ROWS
) -> list[tuple[str, str, float]]:
    """(a, b, cosine) for every pair with cosine ≥ threshold, a before b in `ids` order; rows unit length."""
    n = len(ids)
    if n < 2:
        return []
    matrix = np.asarray(vectors, dtype=np.float32)
    pairs: list[tuple[str, str, float]] = []
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        block = matrix[start:stop] @ matrix[start:].T  # rows start..stop against columns start..n
        # Keep the strict upper triangle: column index (offset by start) greater than the row index.
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i, j = start + r, start + c
            if j > i:
                pairs.append((ids[i], ids[j], round(float(block[r, c]), 4)))
    return pairs
