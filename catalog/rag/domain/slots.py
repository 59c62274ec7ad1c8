"""The vectors and lexical rows of a system's tool texts, one slot per text, appended as texts change.

A slot holds one tool text's whole-text vector, its phrase vectors and its lexical row, made once from one stored
vector row. A change appends the slots of the texts it brought (a new tool, a new text, a re-made vector) past the
end; a slot no index serves any more (a tool retired, a text replaced) stays where it is until the dead slots are
a quarter of the table, when the table is compacted. Each vector is held once: the table is the only copy.

The arrays have room to grow: an append writes past the end of the newest table only, so a table an index serves
never changes under a request that is ranking over it (tables are values; the buffers behind them only grow).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from catalog.rag.domain.hybrid import PhraseMatrix
from catalog.rag.domain.lexical import LexicalRows, joined, lexical_rows, term_counts

SlotKey = tuple[int, str]  # (tool pk, the hash of the text the vectors came from)
DELTA_SHARE = 8  # appended lexical rows are merged into the base part when they pass 1/8 of it
DEAD_SHARE = 4  # a table is compacted when a quarter of its slots are served by no index


@dataclass(frozen=True)
class Piece:
    """What one slot is made of: one stored vector row of one tool text."""

    key: SlotKey
    stamp: object  # when the vector was made: a re-made vector is another piece
    whole: np.ndarray  # (dim,)
    positive: np.ndarray  # (p, dim)
    negative: np.ndarray  # (q, dim)
    text: str  # the text of its lexical row (`lexical_text`)


class _Buffers:
    """Arrays with room to grow; the first `written` slots (and phrase rows) hold data."""

    def __init__(self, dim: int, slots: int, positives: int, negatives: int) -> None:
        self.whole = np.zeros((slots, dim), np.float32)
        self.positive = np.zeros((positives, dim), np.float32)
        self.negative = np.zeros((negatives, dim), np.float32)
        self.written = self.pos_written = self.neg_written = 0

    def copy(self, extra: tuple[int, int, int]) -> _Buffers:
        """The written part in new arrays with room for `extra` more (and half as much again)."""
        grow = [max(n + n // 2, n + more + (n + more) // 8) + 64 for n, more in zip(self.filled, extra, strict=True)]
        out = _Buffers(self.whole.shape[1], *grow)
        out.whole[: self.written] = self.whole[: self.written]
        out.positive[: self.pos_written] = self.positive[: self.pos_written]
        out.negative[: self.neg_written] = self.negative[: self.neg_written]
        out.written, out.pos_written, out.neg_written = self.filled
        return out

    @property
    def filled(self) -> tuple[int, int, int]:
        return self.written, self.pos_written, self.neg_written

    def fits(self, extra: tuple[int, int, int]) -> bool:
        room = (self.whole.shape[0], self.positive.shape[0], self.negative.shape[0])
        return all(n + more <= cap for n, more, cap in zip(self.filled, extra, room, strict=True))


@dataclass(frozen=True)
class SlotTable:
    buffers: _Buffers
    used: int
    pos_start: np.ndarray  # (used + 1,) int64: slot s's positive phrases are positive[pos_start[s]:pos_start[s+1]]
    neg_start: np.ndarray
    slots: dict[SlotKey, tuple[int, object]]  # each text's newest slot and its stamp
    lexical: tuple[LexicalRows, ...]  # the base rows, then the rows appended since (one part)
    origin: object  # the same while slots keep their numbers (a compaction renumbers them)

    @property
    def dim(self) -> int:
        return int(self.buffers.whole.shape[1])

    @property
    def matrix(self) -> np.ndarray:
        return self.buffers.whole[: self.used]

    @property
    def phrases(self) -> PhraseMatrix:
        positive = self.buffers.positive[: int(self.pos_start[-1])]
        negative = self.buffers.negative[: int(self.neg_start[-1])]
        return PhraseMatrix(positive, self.pos_start, negative, self.neg_start)

    def slot(self, key: SlotKey) -> int | None:
        found = self.slots.get(key)
        return None if found is None else found[0]


def empty_table(dim: int) -> SlotTable:
    start = np.zeros(1, np.int64)
    return SlotTable(_Buffers(dim, 0, 0, 0), 0, start, start, {}, (lexical_rows([]),), object())


def _sizes(pieces: Sequence[Piece]) -> tuple[int, int, int]:
    return len(pieces), sum(len(p.positive) for p in pieces), sum(len(p.negative) for p in pieces)


def appended(table: SlotTable, pieces: Sequence[Piece]) -> SlotTable:
    """`table` with a slot for each piece past its end (the piece's key then names the new slot)."""
    if not pieces:
        return table
    extra = _sizes(pieces)
    buffers = table.buffers
    if buffers.filled != (table.used, int(table.pos_start[-1]), int(table.neg_start[-1])) or not buffers.fits(extra):
        buffers = _trimmed(table).copy(extra)  # not the newest table (or full): never write under a served one
    slot, pos, neg = buffers.filled
    buffers.whole[slot : slot + len(pieces)] = np.stack([p.whole for p in pieces])
    pos_ends, neg_ends = [], []
    slots = dict(table.slots)
    for n, piece in enumerate(pieces):
        buffers.positive[pos : pos + len(piece.positive)] = piece.positive
        buffers.negative[neg : neg + len(piece.negative)] = piece.negative
        pos, neg = pos + len(piece.positive), neg + len(piece.negative)
        pos_ends.append(pos)
        neg_ends.append(neg)
        slots[piece.key] = (slot + n, piece.stamp)
    buffers.written, buffers.pos_written, buffers.neg_written = slot + len(pieces), pos, neg
    added = lexical_rows([term_counts([p.text for p in pieces])])  # one vectoriser call for every text
    base, *delta = table.lexical
    parts = (base, joined([*delta, added])) if base.count else (added,)
    if len(parts) == 2 and parts[1].count * DELTA_SHARE > max(parts[0].count, 512):
        parts = (joined(parts),)
    return SlotTable(
        buffers,
        slot + len(pieces),
        np.concatenate([table.pos_start, np.array(pos_ends, np.int64)]),
        np.concatenate([table.neg_start, np.array(neg_ends, np.int64)]),
        slots,
        parts,
        table.origin,
    )


def _trimmed(table: SlotTable) -> _Buffers:
    """A view of the buffers cut to what `table` holds (what a copy starts from)."""
    view = _Buffers.__new__(_Buffers)
    view.whole, view.positive, view.negative = table.buffers.whole, table.buffers.positive, table.buffers.negative
    view.written, view.pos_written, view.neg_written = table.used, int(table.pos_start[-1]), int(table.neg_start[-1])
    return view


def needs_compaction(table: SlotTable, served: np.ndarray) -> bool:
    """`served`: the slots some index serves."""
    dead = table.used - int(np.count_nonzero(served))
    return dead > 256 and dead * DEAD_SHARE > table.used


def compacted(table: SlotTable, served: np.ndarray) -> SlotTable:
    """Only the served slots, renumbered in their order, in arrays sized to them (with room to grow)."""
    keep = np.flatnonzero(served)
    pos_sizes = (table.pos_start[1:] - table.pos_start[:-1])[keep]
    neg_sizes = (table.neg_start[1:] - table.neg_start[:-1])[keep]
    buffers = _Buffers(table.dim, len(keep) + len(keep) // 8 + 64, 0, 0)
    buffers.whole[: len(keep)] = table.matrix[keep]
    buffers.positive = _gathered(table.buffers.positive, table.pos_start, keep, pos_sizes)
    buffers.negative = _gathered(table.buffers.negative, table.neg_start, keep, neg_sizes)
    buffers.written, buffers.pos_written, buffers.neg_written = len(keep), int(pos_sizes.sum()), int(neg_sizes.sum())
    renumber = np.full(table.used, -1, np.int64)
    renumber[keep] = np.arange(len(keep))
    slots = {key: (int(renumber[s]), stamp) for key, (s, stamp) in table.slots.items() if renumber[s] >= 0}
    return SlotTable(
        buffers,
        len(keep),
        np.concatenate([[0], np.cumsum(pos_sizes)]).astype(np.int64),
        np.concatenate([[0], np.cumsum(neg_sizes)]).astype(np.int64),
        slots,
        (joined(table.lexical, keep),),
        object(),
    )


def _gathered(rows: np.ndarray, start: np.ndarray, keep: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The phrase rows of the kept slots, in order, in an array with room for an eighth more."""
    total = int(sizes.sum())
    out = np.zeros((total + total // 8 + 64, rows.shape[1]), np.float32)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    index = np.arange(total) + np.repeat(start[keep] - offsets, sizes)
    out[:total] = rows[index]
    return out
