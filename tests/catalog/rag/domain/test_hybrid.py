"""Hybrid ranking over hand-made vectors: phrases lift a tool, a DO NOT USE WHEN match lowers it, shared words
count, and every tool's signals can be explained, in the shortlist or not."""

from __future__ import annotations

import numpy as np
import pytest

from catalog.rag.domain.hybrid import (
    LEXICAL,
    NORM,
    PHRASE,
    RRF,
    WHOLE,
    AskedRanks,
    RankingConfig,
    fuse,
    phrase_matrix,
    ranks_of,
    score_prompt,
)
from catalog.rag.domain.index import IndexedTool, SystemIndex
from catalog.rag.domain.lexical import lexical_index, term_counts
from catalog.rag.domain.ranking import FUSED, rag_hits, rank_prompt


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def tool(declared_id: str, row: int) -> IndexedTool:
    return IndexedTool(
        pk=row + 1,
        system="condor",
        declared_id=declared_id,
        key=declared_id.lower(),
        plane="business",
        availability="production",
        always_include=False,
        rag_description="",
        description=declared_id,
        instruction_fragment=None,
        input_schema=None,
        has_text=True,
        row=row,
        vector_state="current",
    )


QUERY = unit(1, 0, 0)
# Row 0 is closest by whole text; row 1 has one keyword right on the prompt; row 2 is near by its whole text but its
# DO NOT USE WHEN sentence is exactly the prompt; row 3 is far on every signal.
WHOLE_VECTORS = np.stack([unit(0.8, 0.6, 0), unit(0.6, 0.8, 0), unit(0.75, 0, 0.66), unit(0, 0, 1)])
PHRASES = [
    (np.stack([unit(0.7, 0.7, 0)]), np.zeros((0, 3), np.float32)),
    (np.stack([unit(0, 1, 0), unit(1, 0, 0)]), np.zeros((0, 3), np.float32)),
    (np.stack([unit(0.8, 0, 0.6)]), np.stack([unit(1, 0, 0)])),
    (np.stack([unit(0, 0, 1)]), np.zeros((0, 3), np.float32)),
]
TEXTS = ["record vitals", "Blutdruckverlauf anzeigen", "list invoices", "void invoice"]


def index(texts: list[str] = TEXTS) -> SystemIndex:
    rows = [tool(name, i) for i, name in enumerate(["recordVitals", "getVitalsTrend", "listInvoices", "voidInvoice"])]
    return SystemIndex(
        tools=rows,
        by_key={t.key: t for t in rows},
        matrix=WHOLE_VECTORS,
        rows=rows,
        floors=[],
        revision=1,
        phrase_vectors=phrase_matrix(PHRASES, 3),
        lexical_rows=lexical_index([term_counts([t]) for t in texts]),
    )


def ranked(prompt: str = "", config: RankingConfig | None = None, built: SystemIndex | None = None) -> list[str]:
    built = built or index()
    hits, _ = rank_prompt(built, np.ones(4, bool), QUERY, prompt, top_k=4, config=config or RankingConfig())
    return [h.tool.declared_id for h in hits]


def test_a_keyword_on_the_prompt_lifts_a_tool_above_the_closest_whole_text() -> None:
    assert ranked(config=RankingConfig(weights={WHOLE: 1.0}))[0] == "recordVitals"  # whole text alone
    assert ranked()[0] == "getVitalsTrend"


def test_a_do_not_use_when_match_lowers_the_tool_only_when_the_negative_weight_is_on() -> None:
    on = ranked(config=RankingConfig(negative_weight=1.0))
    off = ranked(config=RankingConfig(negative_weight=0.0))
    assert on.index("listInvoices") > off.index("listInvoices")
    assert on[-1] == "listInvoices" or on.index("listInvoices") > on.index("recordVitals")


def test_shared_words_decide_where_the_vectors_cannot_tell_tools_apart() -> None:
    rows = [tool(name, i) for i, name in enumerate(["recordVitals", "getVitalsTrend", "listInvoices", "voidInvoice"])]
    same = SystemIndex(
        tools=rows,
        by_key={t.key: t for t in rows},
        matrix=np.stack([QUERY] * 4),
        rows=rows,
        floors=[],
        revision=1,
        lexical_rows=lexical_index([term_counts([t]) for t in [*TEXTS[:3], "Rechnung stornieren"]]),
    )
    assert ranked("bitte die Rechnung stornieren", built=same)[0] == "voidInvoice"
    assert ranked("wie war der Blutdruck im Verlauf", built=same)[0] == "getVitalsTrend"


def test_every_hit_carries_each_signal_score_and_rank() -> None:
    hits, ranks = rank_prompt(index(), np.ones(4, bool), QUERY, "", top_k=4, config=RankingConfig())
    trend = next(h for h in hits if h.tool.declared_id == "getVitalsTrend")
    assert trend.signals[PHRASE].score == pytest.approx(1.0, abs=1e-3) and trend.signals[PHRASE].rank == 1
    assert trend.signals[WHOLE].rank == 3 and trend.signals[LEXICAL].score == 0
    assert trend.relevance == pytest.approx(1.0, abs=1e-3)
    assert ranks.by_signal(WHOLE, 2) == ["recordVitals", "listInvoices"]
    assert ranks.by_signal(FUSED, 1) == ["getVitalsTrend"]


def test_a_tool_outside_the_shortlist_ranks_behind_it_and_is_still_explained() -> None:
    config = RankingConfig(shortlist=1)
    hits, ranks = rank_prompt(index(), np.ones(4, bool), QUERY, "", top_k=1, config=config)
    shortlisted = {h.tool.declared_id for h in hits}
    outside = ranks.get("voidinvoice")
    assert outside is not None and outside.tool.declared_id not in shortlisted
    assert outside.rank > len(hits) and outside.signals[PHRASE].score is not None


def test_ineligible_rows_are_never_ranked() -> None:
    mask = np.array([True, False, True, True])
    hits, ranks = rank_prompt(index(), mask, QUERY, "", top_k=4, config=RankingConfig())
    assert "getVitalsTrend" not in [h.tool.declared_id for h in hits]
    assert ranks.get("getvitalstrend") is None


def test_the_minimum_applies_to_the_best_cosine_not_the_fused_score() -> None:
    hits, _ = rank_prompt(index(), np.ones(4, bool), QUERY, "", top_k=4, config=RankingConfig())
    kept = {p.tool_id for p in rag_hits(hits, top_k=4, min_score=0.5)}
    assert kept == {h.tool.declared_id for h in hits if h.relevance >= 0.5}
    assert "voidInvoice" not in kept  # cosine 0 with the prompt on every vector


@pytest.mark.parametrize("fusion", [NORM, RRF])
def test_a_signal_that_is_the_same_for_every_tool_changes_nothing(fusion: str) -> None:
    whole = np.array([0.9, 0.5, 0.7], dtype=np.float32)
    flat = np.zeros(3, dtype=np.float32)
    fused = fuse({WHOLE: whole, LEXICAL: flat}, RankingConfig(fusion=fusion))
    assert list(np.argsort(-fused)) == [0, 2, 1]


def test_ranks_put_the_best_first_and_missing_scores_last() -> None:
    assert list(ranks_of(np.array([0.2, -np.inf, 0.9, 0.5]))) == [3, 4, 1, 2]
    assert list(ranks_of(np.array([0.5, 0.9, 0.5]))) == [2, 1, 2]  # ties share the better rank
    # asked one at a time (what a hit's signals read): the same ranks, counted for the first asks, then sorted
    scores = np.random.default_rng(3).choice([0.1, 0.2, 0.3, -np.inf], size=500).astype(np.float32)
    ranks = AskedRanks(scores)
    assert [ranks[i] for i in range(500)] == list(ranks_of(scores))
    assert ranks.descending is not None  # past the counted asks it sorted once


def test_the_shortlist_is_the_union_of_the_best_by_whole_text_and_by_shared_words() -> None:
    scored = score_prompt(
        whole_matrix=WHOLE_VECTORS,
        phrases=phrase_matrix(PHRASES, 3),
        lexical=lexical_index([term_counts([t]) for t in TEXTS]),
        row_mask=np.ones(4, bool),
        query=QUERY,
        prompt="void invoice",
        config=RankingConfig(shortlist=1),
    )
    assert set(scored.shortlist.tolist()) == {0, 3}  # best whole text, best shared words
