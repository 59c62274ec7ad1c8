"""The slot table the resolve index is updated in place over: appends never change a table already served, and a
compaction keeps every served slot's vectors, phrases and lexical row, renumbered in order."""

from __future__ import annotations

import numpy as np

from catalog.rag.domain.lexical import counted_index
from catalog.rag.domain.slots import Piece, appended, compacted, empty_table, needs_compaction

DIM = 4


def piece(n: int, phrases: int = 2) -> Piece:
    rng = np.random.default_rng(n)
    return Piece(
        key=(n, f"sha{n}"),
        stamp=n,
        whole=rng.normal(size=DIM).astype(np.float32),
        positive=rng.normal(size=(phrases, DIM)).astype(np.float32),
        negative=rng.normal(size=(1, DIM)).astype(np.float32),
        text=f"tool number {n} lists the patient's item {n}",
    )


def phrases_of(table, slot: int) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    m = table.phrases
    return m.positive[m.pos_start[slot] : m.pos_start[slot + 1]], m.negative[m.neg_start[slot] : m.neg_start[slot + 1]]


def test_an_append_leaves_the_served_table_as_it_was_and_numbers_new_slots_past_its_end() -> None:
    first = appended(empty_table(DIM), [piece(n) for n in range(3)])
    served = first.matrix.copy()
    wide = piece(3, phrases=5)
    second = appended(first, [wide])
    assert first.used == 3 and np.array_equal(first.matrix, served)  # what a request ranks over is unchanged
    assert second.used == 4 and second.slot((3, "sha3")) == 3
    assert np.array_equal(second.matrix[:3], served) and np.array_equal(second.matrix[3], wide.whole)
    positive, negative = phrases_of(second, 3)
    assert np.array_equal(positive, wide.positive) and np.array_equal(negative, wide.negative)
    # Two tables appended from the same one never write into each other's rows.
    other = appended(first, [piece(9)])
    assert np.array_equal(second.matrix[3], wide.whole) and np.array_equal(other.matrix[3], piece(9).whole)


def test_a_compaction_keeps_the_served_slots_in_order_with_their_phrases_and_words() -> None:
    table = empty_table(DIM)
    for start in range(0, 600, 100):  # several appends: the lexical rows come in parts
        table = appended(table, [piece(n, phrases=1 + n % 3) for n in range(start, start + 100)])
    served = np.zeros(table.used, dtype=bool)
    served[::3] = True  # two thirds dead
    assert needs_compaction(table, served)
    small = compacted(table, served)
    kept = np.flatnonzero(served)
    assert small.used == len(kept) and small.origin is not table.origin
    assert np.array_equal(small.matrix, table.matrix[kept])
    for new, old in enumerate(kept.tolist()):
        assert small.slot((old, f"sha{old}")) == new
        assert all(np.array_equal(a, b) for a, b in zip(phrases_of(small, new), phrases_of(table, old), strict=True))
    assert small.slot((1, "sha1")) is None  # a dead slot is gone
    before = counted_index(table.lexical, served).scores("patient's item 300")
    after = counted_index(small.lexical, np.ones(small.used, dtype=bool)).scores("patient's item 300")
    assert np.allclose(after, before[kept], atol=1e-6)
    assert not needs_compaction(small, np.ones(small.used, dtype=bool))
