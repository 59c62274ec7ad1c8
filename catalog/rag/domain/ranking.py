"""Ranking a prompt against one system's index, and what the ranking and the policy propose.

Three signals per eligible tool, fused into one ranking (`catalog.rag.domain.hybrid`). Only the head of the
ranking is materialised; any other tool gets its rank and its signals on demand (the playground's why-not).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog.domain.snapshot import ALWAYS_INCLUDE, FORCED_FLOOR, RAG_RETRIEVED, Proposed
from catalog.domain.vocabulary import FloorTrigger
from catalog.rag.domain.hybrid import (
    LEXICAL,
    PHRASE,
    WHOLE,
    AskedRanks,
    RankingConfig,
    Scored,
    phrase_scores,
    score_prompt,
)
from catalog.rag.domain.index import IndexedTool, SystemIndex

RANKING_HEAD = 50
FUSED = "fused"


@dataclass(frozen=True)
class SignalScore:
    score: float | None  # None: the tool has nothing this signal can score (no phrases)
    rank: int  # among the eligible tools by this signal alone (1 = best)


@dataclass(frozen=True)
class Hit:
    tool: IndexedTool
    score: float | None  # the fused score: what the ranking is by (None outside the shortlist, never fused)
    rank: int  # among eligible tools with a current vector (1 = best)
    signals: Mapping[str, SignalScore]
    relevance: float  # the best cosine of the prompt with the tool's text or a phrase: what the minimum applies to


def _rounded(value: float) -> float | None:
    return round(float(value), 4) if np.isfinite(value) else None


class LazyRanks:
    """Rank, fused score and signals of any eligible tool under one prompt, computed only when asked."""

    def __init__(self, index: SystemIndex, scored: Scored, query: np.ndarray, config: RankingConfig) -> None:
        self.index, self.scored, self.query, self.config = index, scored, query, config
        self._position = {int(row): n for n, row in enumerate(scored.shortlist.tolist())}
        # Each signal's rank of a tool, counted or searched as asked (the shortlisted rows' for the phrase).
        self._ranks = {
            WHOLE: AskedRanks(scored.whole),
            PHRASE: AskedRanks(scored.phrase),
            LEXICAL: AskedRanks(scored.lexical),
        }

    def hit_at(self, position: int) -> Hit:
        """The shortlisted tool at `position` (0 = the best fused)."""
        s = self.scored
        row = int(s.shortlist[position])
        phrase = float(s.phrase[position])
        signals = self._signals(row, phrase, int(self._ranks[PHRASE][position]))
        relevance = max(float(s.whole[row]), phrase if np.isfinite(phrase) else -1.0)
        return Hit(self.index.rows[row], round(float(s.fused[position]), 4), position + 1, signals, relevance)

    def _signals(self, row: int, phrase: float, phrase_rank: int) -> dict[str, SignalScore]:
        s = self.scored
        return {
            WHOLE: SignalScore(_rounded(s.whole[row]), int(self._ranks[WHOLE][row])),
            PHRASE: SignalScore(_rounded(phrase), phrase_rank),
            LEXICAL: SignalScore(_rounded(s.lexical[row]), int(self._ranks[LEXICAL][row])),
        }

    def get(self, key: str) -> Hit | None:
        tool = self.index.by_key.get(key)
        if tool is None or tool.row is None or not np.isfinite(self.scored.whole[tool.row]):
            return None
        position = self._position.get(tool.row)
        if position is not None:
            return self.hit_at(position)
        return self._outside(tool, tool.row)

    def _outside(self, tool: IndexedTool, row: int) -> Hit:
        """A tool outside the shortlist: behind every shortlisted tool (then by whole-text cosine), its phrase
        score computed alone; phrase ranks are among the shortlist."""
        s = self.scored
        phrase = float(phrase_scores(self.index.phrases, np.array([row]), self.query, self.config.negative_weight)[0])
        signals = self._signals(row, phrase, int(np.count_nonzero(s.phrase > phrase)) + 1)
        relevance = max(float(s.whole[row]), phrase if np.isfinite(phrase) else -1.0)
        outside = np.isfinite(s.whole)
        outside[s.shortlist] = False
        rank = len(s.shortlist) + 1 + int(np.count_nonzero(outside & (s.whole > s.whole[row])))
        return Hit(tool, None, rank, signals, relevance)

    def by_signal(self, signal: str, n: int) -> list[str]:
        """Declared ids of the best `n` eligible tools by one signal alone (or `fused`), best first."""
        s = self.scored
        if signal == FUSED:
            rows = s.shortlist[:n]
        elif signal == PHRASE:
            rows = s.shortlist[np.argsort(-s.phrase, kind="stable")][:n]
        else:
            values = s.whole if signal == WHOLE else s.lexical
            eligible = np.flatnonzero(np.isfinite(values))
            rows = eligible[np.argsort(-values[eligible], kind="stable")][:n]
        return [self.index.rows[int(r)].declared_id for r in rows]


class Ranking(Sequence[Hit]):
    """The head of the ranking, best first, each hit made when first read: a resolve reads its top k, the
    playground 25, the evaluation 10 (making fifty hits per resolve was a tenth of a warm one at 50,000 tools)."""

    def __init__(self, ranks: LazyRanks, length: int) -> None:
        self._ranks, self._length = ranks, length
        self._made: dict[int, Hit] = {}

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, at: Any) -> Any:
        if isinstance(at, slice):
            return [self[n] for n in range(*at.indices(self._length))]
        n = at + self._length if at < 0 else at
        if not 0 <= n < self._length:
            raise IndexError(at)
        hit = self._made.get(n)
        if hit is None:
            hit = self._made[n] = self._ranks.hit_at(n)
        return hit

    def __iter__(self) -> Iterator[Hit]:
        return (self[n] for n in range(self._length))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def rank_prompt(
    index: SystemIndex, row_mask: np.ndarray, query: np.ndarray, prompt: str, *, top_k: int, config: RankingConfig
) -> tuple[Ranking, LazyRanks]:
    """The best eligible tools by fused score (at least the top k, best first), and the rank of any other."""
    scored = score_prompt(
        whole_matrix=index.matrix,
        phrases=index.phrases,
        lexical=index.lexical,
        row_mask=row_mask,
        query=query,
        prompt=prompt,
        config=config,
        order=index.order,
    )
    ranks = LazyRanks(index, scored, query, config)
    head = min(len(scored.shortlist), max(RANKING_HEAD, top_k))
    return Ranking(ranks, head), ranks


def rag_hits(ranking: Sequence[Hit], *, top_k: int, min_score: float) -> list[Proposed]:
    """The top k of the ranking that reach the minimum score, with activation reason `rag-retrieved`."""
    kept = [h for h in ranking[:top_k] if h.relevance >= min_score]
    return [Proposed(h.tool.declared_id, RAG_RETRIEVED, h.score, h.rank) for h in kept]


def policy_additions(index: SystemIndex, *, attachments: bool, multi_entity_intake: bool) -> list[Proposed]:
    """Forced floors whose trigger is set (in floor order), then the alwaysInclude tools: the seed prepends
    these ahead of the RAG hits."""
    triggers = {
        FloorTrigger.ATTACHMENTS.value: attachments,
        FloorTrigger.MULTI_ENTITY_INTAKE.value: multi_entity_intake,
    }
    additions = [
        Proposed(tool_id, f"{FORCED_FLOOR}:{slug}")
        for slug, trigger, tool_ids in index.floors
        if triggers.get(trigger)
        for tool_id in tool_ids
    ]
    return additions + [Proposed(tool_id, ALWAYS_INCLUDE) for tool_id in index.always_included]
