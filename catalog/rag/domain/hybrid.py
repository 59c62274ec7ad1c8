"""Hybrid ranking: three signals per eligible tool, fused into one ranking (catalog/rag/README.md, "Signals").

- `whole`: cosine of the prompt with the tool's whole embedded text (description and every keyword);
- `phrase`: the best cosine of the prompt with one of the tool's phrases (a keyword or a description sentence,
  each embedded alone), lowered when the prompt matches its `DO NOT USE WHEN` sentence better;
- `lexical`: TF-IDF cosine over character n-grams (German compounds and inflections).

`whole` and `lexical` are scored over every eligible row (a matrix product each); the shortlist is the best
`shortlist` rows of either, and `phrase` and the fusion run over it: the phrase vectors are several times as many
as the tools. Fusion is per query: reciprocal rank (`rrf`) or z-scores (`norm`), weighted (both measured in
bench/retrieval_quality.py; the default is the better one on the tuning cases).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scikit-learn and SciPy: imported by what ranks, not by every process that reads a constant
    from catalog.rag.domain.lexical import LexicalIndex

WHOLE, PHRASE, LEXICAL = "whole", "phrase", "lexical"
SIGNALS = (WHOLE, PHRASE, LEXICAL)
RRF, NORM = "rrf", "norm"


@dataclass(frozen=True)
class RankingConfig:
    fusion: str = NORM
    weights: Mapping[str, float] = field(default_factory=lambda: {WHOLE: 1.0, PHRASE: 1.0, LEXICAL: 1.0})
    rrf_k: float = 60.0
    shortlist: int = 200
    negative_weight: float = 1.0  # how much a better-matching DO NOT USE WHEN sentence lowers the phrase score


@dataclass(frozen=True)
class PhraseMatrix:
    """Phrase vectors of the system's rows, grouped by row: row r's positives are `positive[pos_start[r]:
    pos_start[r + 1]]`, its negatives likewise."""

    # float32: gathering float16 rows and converting them cost twice as much per prompt as the float32 gather
    # (measured); the memory is the price (catalog/rag/README.md, "Memory": about 20 KB per tool).
    positive: np.ndarray  # (P, d) float32
    pos_start: np.ndarray  # (rows + 1,) int64
    negative: np.ndarray  # (N, d) float32
    neg_start: np.ndarray  # (rows + 1,) int64

    @property
    def count(self) -> int:
        return int(self.positive.shape[0] + self.negative.shape[0])


def phrase_matrix(per_row: list[tuple[np.ndarray, np.ndarray]], dim: int) -> PhraseMatrix:
    """From each row's (positive vectors, negative vectors), in row order."""

    def stacked(part: int) -> tuple[np.ndarray, np.ndarray]:
        blocks = [pair[part] for pair in per_row]
        sizes = np.array([len(b) for b in blocks], dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        present = [b for b in blocks if len(b)]
        matrix = np.vstack(present).astype(np.float32) if present else np.zeros((0, dim), np.float32)
        return matrix, start

    positive, pos_start = stacked(0)
    negative, neg_start = stacked(1)
    return PhraseMatrix(positive, pos_start, negative, neg_start)


def _best_per_row(matrix: np.ndarray, start: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The best cosine among each row's phrases, for `rows` (-inf where a row has none)."""
    lengths = start[rows + 1] - start[rows]
    best = np.full(len(rows), -np.inf, dtype=np.float32)
    has = lengths > 0
    if not has.any():
        return best
    picked, picked_lengths = rows[has], lengths[has]
    offsets = np.concatenate([[0], np.cumsum(picked_lengths)[:-1]]).astype(np.int64)
    # Every picked row's phrase positions in one vector: 0..total-1, each run shifted to its row's start.
    index = np.arange(int(picked_lengths.sum())) + np.repeat(start[picked] - offsets, picked_lengths)
    sims = matrix[index] @ query
    best[has] = np.maximum.reduceat(sims, offsets)
    return best


def phrase_scores(phrases: PhraseMatrix, rows: np.ndarray, query: np.ndarray, negative_weight: float) -> np.ndarray:
    """Each row's best positive phrase, less `negative_weight` × how far its best negative sentence beats it."""
    positive = _best_per_row(phrases.positive, phrases.pos_start, rows, query)
    if negative_weight == 0 or phrases.negative.shape[0] == 0:
        return positive
    negative = _best_per_row(phrases.negative, phrases.neg_start, rows, query)
    both = np.isfinite(negative) & np.isfinite(positive)  # a row without positives or negatives has no margin
    margin = np.zeros_like(positive)
    margin[both] = np.maximum(negative[both] - positive[both], 0)
    return (positive - negative_weight * margin).astype(np.float32)


def ranks_of(scores: np.ndarray) -> np.ndarray:
    """1-based rank of each score: one more than the number of better scores, so ties share the better rank (a
    signal that cannot tell tools apart favours none of them); -inf entries rank last."""
    descending = np.sort(-scores)
    return np.searchsorted(descending, -scores, side="left").astype(np.int64) + 1


class AskedRanks:
    """`ranks_of(scores)[i]` for any i, asked one at a time. The first `COUNTED` asks each count the better scores
    (a resolve asks for its top k's ranks: ten passes over the rows cost less than one sort of them); past that
    the scores are sorted once and each asked rank is one binary search (the playground's 25, why-not's lists)."""

    COUNTED = 12

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = scores
        self.descending: np.ndarray | None = None
        self.asked = 0

    def __getitem__(self, i: int) -> int:
        self.asked += 1
        if self.descending is None and self.asked <= self.COUNTED:
            return int(np.count_nonzero(self.scores > self.scores[i])) + 1
        if self.descending is None:
            self.descending = np.sort(-self.scores)
        return int(np.searchsorted(self.descending, -self.scores[i], side="left")) + 1


def _zscores(values: np.ndarray) -> np.ndarray:
    finite = np.isfinite(values)
    if not finite.any():
        return np.zeros_like(values)
    spread = float(values[finite].std())
    centred = (values - float(values[finite].mean())) / (spread if spread > 1e-9 else 1.0)
    return np.where(finite, centred, float(centred[finite].min()) - 1.0)


def fuse(signals: Mapping[str, np.ndarray], config: RankingConfig) -> np.ndarray:
    """One score per shortlisted row from the signals' scores over the shortlist (higher is better)."""
    total = np.zeros(len(next(iter(signals.values()))), dtype=np.float64)
    for name, values in signals.items():
        weight = config.weights.get(name, 0.0)
        if weight == 0:
            continue
        if config.fusion == RRF:
            total += weight / (config.rrf_k + ranks_of(values))
        else:
            total += weight * _zscores(values.astype(np.float64))
    return total


@dataclass(frozen=True)
class Scored:
    """One prompt scored over a system's rows: `whole` and `lexical` for every row (-inf where not eligible);
    the shortlist, with its phrase and fused scores, best fused first."""

    whole: np.ndarray
    lexical: np.ndarray
    shortlist: np.ndarray  # row numbers, best fused first
    phrase: np.ndarray  # per shortlisted row, same order
    fused: np.ndarray  # per shortlisted row, same order


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    eligible = np.flatnonzero(np.isfinite(scores))
    if len(eligible) <= n:
        return eligible
    return eligible[np.argpartition(-scores[eligible], n - 1)[:n]]


def score_prompt(
    *,
    whole_matrix: np.ndarray,
    phrases: PhraseMatrix,
    lexical: LexicalIndex,
    row_mask: np.ndarray,
    query: np.ndarray,
    prompt: str,
    config: RankingConfig,
    order: np.ndarray | None = None,
) -> Scored:
    """`order`: each row's place among the tools (declared-id order), where rows are not in that order."""
    whole = np.where(row_mask, whole_matrix @ query, -np.inf).astype(np.float32)
    lex = np.where(row_mask, lexical.scores(prompt), -np.inf).astype(np.float32)
    shortlist = np.union1d(_top(whole, config.shortlist), _top(lex, config.shortlist)).astype(np.int64)
    phrase = phrase_scores(phrases, shortlist, query, config.negative_weight)
    fused = fuse({WHOLE: whole[shortlist], PHRASE: phrase, LEXICAL: lex[shortlist]}, config)
    ties = shortlist if order is None else order[shortlist]
    best = np.lexsort((ties, -fused))  # best fused first; ties in declared-id order
    return Scored(whole, lex, shortlist[best], phrase[best], fused[best])
