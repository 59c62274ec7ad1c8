"""Sibling near-duplicates: pairs of one system's tools whose vectors are too close to tell apart.

Computed blockwise: 5,000 tools never need a 5,000 × 5,000 matrix at once (a block of rows against all
columns, float32). Each tool names at most its `max_per_tool` closest colliding siblings, so a catalog of
templated descriptions yields a readable handful of findings per tool, not n² of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BLOCK_ROWS = 512
MAX_PER_TOOL = 3


def near_duplicate_pairs(
    ids: Sequence[str],
    vectors: np.ndarray,
    threshold: float,
    *,
    block_rows: int = BLOCK_ROWS,
    max_per_tool: int = MAX_PER_TOOL,
) -> list[tuple[str, str, float]]:
    """(a, b, cosine) with cosine ≥ threshold, a before b in `ids` order, each pair once; rows unit length.
    A pair is kept when it is among the `max_per_tool` closest of either of its tools."""
    n = len(ids)
    if n < 2:
        return []
    matrix = np.asarray(vectors, dtype=np.float32)
    found: dict[tuple[int, int], float] = {}
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        block = matrix[start:stop] @ matrix.T  # (rows of this block) × (every tool)
        block[np.arange(stop - start), np.arange(start, stop)] = -np.inf  # a tool is not its own sibling
        for r in range(stop - start):
            row = block[r]
            hits = np.flatnonzero(row >= threshold)
            if hits.size == 0:
                continue
            if hits.size > max_per_tool:
                hits = hits[np.argsort(-row[hits], kind="stable")[:max_per_tool]]
            i = start + r
            for j in hits.tolist():
                found[(min(i, j), max(i, j))] = round(float(row[j]), 4)
    return [(ids[i], ids[j], cosine) for (i, j), cosine in sorted(found.items())]
