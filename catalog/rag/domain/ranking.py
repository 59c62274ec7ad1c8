"""Ranking a prompt against one system's current vectors, and what the ranking and the policy propose.

Brute-force cosine over the in-memory matrix (rows are unit length, so the dot product is the cosine): at
catalog sizes that is faster than any index. Only the head of the ranking is materialised; any other tool
gets its rank on demand (the playground's why-not).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from catalog.domain.snapshot import ALWAYS_INCLUDE, FORCED_FLOOR, RAG_RETRIEVED, Proposed
from catalog.domain.vocabulary import FloorTrigger
from catalog.rag.domain.index import IndexedTool, SystemIndex

RANKING_HEAD = 50


@dataclass(frozen=True)
class Hit:
    tool: IndexedTool
    score: float
    rank: int  # among eligible tools with a current vector (1 = best)


class LazyRanks:
    """Rank and score of any tool under one prompt, computed only when asked (the playground's why-not)."""

    def __init__(self, index: SystemIndex, scores: np.ndarray) -> None:
        self.index, self.scores = index, scores

    def get(self, key: str) -> Hit | None:
        tool = self.index.by_key.get(key)
        if tool is None or tool.row is None or self.scores[tool.row] == -np.inf:
            return None
        score = self.scores[tool.row]
        return Hit(tool, round(float(score), 4), int(np.count_nonzero(self.scores > score)) + 1)


def rank_prompt(
    index: SystemIndex, row_mask: np.ndarray, query: np.ndarray, *, top_k: int
) -> tuple[list[Hit], LazyRanks]:
    """The best eligible tools by cosine to `query` (at least the top k, best first), and the rank of any other."""
    scores = np.where(row_mask, index.matrix @ query, -np.inf)
    head = min(len(scores), max(RANKING_HEAD, top_k))
    order = np.argpartition(-scores, head - 1)[:head] if head < len(scores) else np.arange(len(scores))
    order = order[np.argsort(-scores[order], kind="stable")]
    ranking: list[Hit] = []
    for rank, row in enumerate(order.tolist(), start=1):
        if scores[row] == -np.inf:  # the rest are not eligible under the profile
            break
        ranking.append(Hit(index.rows[row], round(float(scores[row]), 4), rank))
    return ranking, LazyRanks(index, scores)


def rag_hits(ranking: list[Hit], *, top_k: int, min_score: float) -> list[Proposed]:
    """The top k of the ranking that reach the minimum score, with activation reason `rag-retrieved`."""
    kept = [h for h in ranking[:top_k] if h.score >= min_score]
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
