"""Sibling near-duplicates: pairs of one system's tools whose vectors are too close to tell apart.

Computed blockwise: 5,000 tools never need a 5,000 × 5,000 matrix at once (a block of rows against all
columns, float32). Each tool names at most its `max_per_tool` closest colliding siblings, so a catalog of
templated descriptions yields a readable handful of findings per tool, not n² of them.

After a change, `sibling_delta` scores only the rows that can have changed (the changed tools, their colliding
neighbours, and the tools paired with those) against every column: a C × N product, not N × N.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

BLOCK_ROWS = 512
MAX_PER_TOOL = 3


@dataclass(frozen=True)
class RowHits:
    row: int
    nearest: list[tuple[int, float]]  # up to max_per_tool (column, cosine) at or above the threshold, closest first
    above: list[int]  # every column at or above the threshold


def row_hits(
    vectors: np.ndarray,
    rows: Sequence[int],
    threshold: float,
    *,
    block_rows: int = BLOCK_ROWS,
    max_per_tool: int = MAX_PER_TOOL,
) -> Iterator[RowHits]:
    """The colliding columns of each of `rows` (indices into `vectors`, unit rows), scored against every row."""
    matrix = np.asarray(vectors, dtype=np.float32)
    rows = list(rows)
    for start in range(0, len(rows), block_rows):
        chunk = np.asarray(rows[start : start + block_rows], dtype=np.intp)
        block = matrix[chunk] @ matrix.T  # (these rows) × (every tool)
        block[np.arange(chunk.size), chunk] = -np.inf  # a tool is not its own sibling
        for r, i in enumerate(chunk.tolist()):
            row = block[r]
            hits = np.flatnonzero(row >= threshold)
            if hits.size == 0:
                continue
            nearest = hits[np.argsort(-row[hits], kind="stable")[:max_per_tool]]
            yield RowHits(i, [(j, round(float(row[j]), 4)) for j in nearest.tolist()], hits.tolist())


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
    if len(ids) < 2:
        return []
    found: set[tuple[int, int]] = set()
    for hit in row_hits(vectors, range(len(ids)), threshold, block_rows=block_rows, max_per_tool=max_per_tool):
        found.update((min(hit.row, j), max(hit.row, j)) for j, _ in hit.nearest)
    return [(ids[i], ids[j], cosine) for i, j, cosine in _scored(vectors, found)]


def _scored(vectors: np.ndarray, pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int, float]]:
    """(i, j, cosine) of each pair, sorted, the cosine computed once per pair: the same value whichever of its two
    rows found it and whether a full or an incremental pass did."""
    ordered = sorted(pairs)
    if not ordered:
        return []
    matrix = np.asarray(vectors, dtype=np.float32)
    left, right = (np.asarray(side, dtype=np.intp) for side in zip(*ordered, strict=True))
    cosines = np.einsum("ij,ij->i", matrix[left], matrix[right])
    return [(i, j, round(float(c), 4)) for (i, j), c in zip(ordered, cosines.tolist(), strict=True)]


@dataclass(frozen=True)
class SiblingDelta:
    affected: set[int]  # rows whose stored pairs are replaced by `pairs`
    pairs: list[tuple[int, int, float]]  # (i, j, cosine), i < j, every pair that touches an affected row
    rows_scored: int  # how many rows were scored against every column (the product's height)


def sibling_delta(
    vectors: np.ndarray,
    changed: Collection[int],
    stored: Iterable[tuple[int, int]],
    threshold: float,
    *,
    block_rows: int = BLOCK_ROWS,
    max_per_tool: int = MAX_PER_TOOL,
) -> SiblingDelta:
    """The pairs of `near_duplicate_pairs` that touch a tool whose pairs may have changed, scoring only those rows.

    `changed`: rows whose vector changed (or whose nearest siblings may have: the partners of pairs dropped with a
    changed or retired tool). `stored`: the pairs kept from before. A tool's nearest siblings change only when a
    changed vector collides with it now (it is among the changed rows' columns at or above the threshold) or
    collided before (then it was a partner of a dropped pair, so it is among `changed`). Every other tool's
    nearest are as before; those of them paired with an affected tool are scored too, to keep their pair when the
    affected tool is among their nearest. Replacing the stored pairs that touch `affected` by `pairs` gives what a
    full recompute gives.
    """
    kw = {"block_rows": block_rows, "max_per_tool": max_per_tool}
    changed_rows = sorted(set(changed))
    hits = {h.row: h for h in row_hits(vectors, changed_rows, threshold, **kw)}
    affected = set(changed_rows).union(*(h.above for h in hits.values()))
    neighbours = sorted(affected - set(changed_rows))
    hits.update((h.row, h) for h in row_hits(vectors, neighbours, threshold, **kw))
    linked = sorted({b if a in affected else a for a, b in stored if (a in affected) != (b in affected)})
    linked_hits = list(row_hits(vectors, linked, threshold, **kw))
    found: set[tuple[int, int]] = set()
    for hit in hits.values():
        found.update((min(hit.row, j), max(hit.row, j)) for j, _ in hit.nearest)
    for hit in linked_hits:
        found.update((min(hit.row, j), max(hit.row, j)) for j, _ in hit.nearest if j in affected)
    return SiblingDelta(affected, _scored(vectors, found), len(changed_rows) + len(neighbours) + len(linked))
