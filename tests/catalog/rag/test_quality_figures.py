"""The figures per signal, case split and language that the case-set run stores, and the trend chart drawn from
them: pure helpers by hand, then the live run over the demo catalog and over a case file of our own."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.rag.domain.cases import load_cases
from catalog.rag.domain.evaluation import (
    CHAR_WIDTH,
    CHART_WIDTH,
    FIGURE_LANGUAGES,
    FIGURE_SIGNALS,
    FIGURE_SPLITS,
    FONT,
    METRICS,
    RankedCase,
    SplitCase,
    TrendRun,
    figure_rows,
    revisions_label,
    split_figures,
    trend_chart,
)
from catalog.rag.services import evaluation
from catalog.rag.services.evaluation import DEFAULT_CASES, retrieval_evaluate
from tests.catalog.rag.conftest import CountingEmbedder

# The index's freshness check per case (catalog version, vectors version): what resolving a case costs today.
QUERIES_PER_CASE = 2
# Bringing the index up to date once (catalog and vector versions, revisions, tools, profiles, forced floors and
# what was signed off of them; the vectors' listing: the rows since the last one, every row of the tools among them,
# the count check, and a whole read when the count disagrees, as when an earlier test's rows were rolled back; their
# blobs, one read per system), the run's revisions, and its insert: constant per run, whatever the case count.
QUERIES_PER_RUN = 13


@pytest.fixture
def demo_embedded(shared_demo_embedded: None) -> None:
    """The demo, imported and embedded once for the module (tests/catalog/rag/conftest.py)."""


def hit(case_id: str, rank: int | None) -> RankedCase:
    """A case whose expected tool `want` is at `rank` (None: not retrieved) among ten others."""
    ranked = [f"other{i}" for i in range(10)]
    if rank is not None:
        ranked.insert(rank - 1, "want")
    return RankedCase(case_id, ranked[:10], ["want"])


def test_split_figures_pool_and_separate_splits_and_languages_by_hand() -> None:
    figures = split_figures(
        [
            SplitCase("held-back", "en", hit("a", 1)),
            SplitCase("held-back", "de", hit("b", 4)),
            SplitCase("tune", "en", hit("c", None)),
            SplitCase("tune", "fr", hit("d", 2)),  # a language we do not report alone: only under "all"
        ]
    )
    assert set(figures) == set(FIGURE_SPLITS) and all(set(f) == set(FIGURE_LANGUAGES) for f in figures.values())
    assert figures["held-back"]["en"] == {
        "cases": 1,
        "recall_at_1": 1.0,
        "recall_at_5": 1.0,
        "recall_at_10": 1.0,
        "mrr": 1.0,
    }
    assert figures["held-back"]["all"]["recall_at_1"] == 0.5 and figures["held-back"]["all"]["mrr"] == pytest.approx(
        0.625
    )
    assert figures["tune"]["all"]["cases"] == 2 and figures["tune"]["all"]["recall_at_5"] == 0.5
    assert figures["all"]["all"]["cases"] == 4 and figures["all"]["en"]["cases"] == 2
    # No case, no average: a dash on the page, never a made-up 0.
    assert figures["tune"]["de"] == {"cases": 0, **dict.fromkeys(METRICS)}


def test_figure_rows_of_a_run_stored_before_figures_are_none() -> None:
    assert figure_rows({}, "held-back", "en", FIGURE_SIGNALS) == [(s, None) for s in FIGURE_SIGNALS]
    assert revisions_label({"tucan": 1, "condor": 3}) == "condor r3 · tucan r1" and revisions_label({}) == ""


def test_the_trend_chart_has_one_slot_per_run_and_breaks_its_lines_where_a_run_has_no_figure() -> None:
    runs = [
        TrendRun("condor r1 · tucan r1", (None, None, None)),  # stored before the split was recorded
        TrendRun("condor r2 · tucan r1", (0.5, 0.9, 0.7)),
        TrendRun("condor r2 · tucan r1", (0.75, 1.0, 0.7)),
        TrendRun("condor r3 · tucan r1", (1.0, 1.0, None)),
    ]
    chart = trend_chart(runs, 3)
    assert [len(p) for p in chart.points] == [0, 3, 3, 2]
    assert chart.xs == sorted(chart.xs) and all(chart.plot_left < x < chart.plot_right for x in chart.xs)
    top, bottom = chart.grid[-1][0], chart.grid[0][0]
    assert [text for _, text in chart.grid] == ["0", "0.25", "0.5", "0.75", "1"] and bottom == chart.plot_bottom
    assert chart.points[3][0].y == top and chart.points[1][0].y == (top + bottom) / 2
    assert len(chart.lines[0]) == 1 and chart.lines[0][0].count(" ") == 2  # runs 2..4: one line of three points
    assert chart.lines[2] == [f"{chart.xs[1]},{chart.points[1][2].y} {chart.xs[2]},{chart.points[2][2].y}"]
    # Consecutive runs on the same revisions share one label, under a bracket from their first to last point.
    assert [(label.text, label.x1, label.x2) for label in chart.labels] == [
        ("condor r1 · tucan r1", chart.xs[0], chart.xs[0]),
        ("condor r2 · tucan r1", chart.xs[1], chart.xs[2]),
        ("condor r3 · tucan r1", chart.xs[3], chart.xs[3]),
    ]


def test_labels_stack_or_turn_vertical_so_they_never_overlap() -> None:
    few = trend_chart([TrendRun(f"condor r{n} · tucan r1", (0.5, 0.5, 0.5)) for n in (1, 2, 3)], 3)
    assert [label.lines for label in few.labels] == [(f"condor r{n}", "tucan r1") for n in (1, 2, 3)]
    assert not any(label.rotated for label in few.labels) and few.height < 200
    assert len("condor r1") * CHAR_WIDTH < few.xs[1] - few.xs[0]  # each line narrower than its slot
    many = trend_chart([TrendRun(f"condor r{n} · tucan r1", (0.5, 0.5, 0.5)) for n in range(20)], 3)
    assert all(label.rotated for label in many.labels) and len(many.labels) == 20
    slot = many.xs[1] - many.xs[0]
    assert slot > FONT  # vertical labels are one line high: neighbours never touch
    assert many.height >= many.plot_bottom + len("condor r19 · tucan r1") * CHAR_WIDTH and many.width == CHART_WIDTH
    single = trend_chart([TrendRun("condor r1", (0.2, None, None))], 3)
    assert single.xs == [(single.plot_left + single.plot_right) / 2] and single.lines == [[], [], []]


def test_the_demo_run_reports_every_signal_per_split_and_language_in_one_embedder_call(
    demo_embedded: None, counting_embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evaluation, "get_embedder", lambda: counting_embedder)
    cases = load_cases(DEFAULT_CASES)
    with CaptureQueriesContext(connection) as queries:
        run = retrieval_evaluate()
    assert len(counting_embedder.calls) == 1 and len(counting_embedder.calls[0]) == len(cases)
    assert len(queries) <= QUERIES_PER_CASE * len(cases) + QUERIES_PER_RUN
    assert set(run.figures) == {"fused", "whole", "phrase", "lexical"}
    for signal, per_split in run.figures.items():
        for split in FIGURE_SPLITS:
            for language in FIGURE_LANGUAGES:
                counted = sum(1 for c in cases if split in ("all", c.split) and language in ("all", c.language))
                figures = per_split[split][language]
                assert figures["cases"] == counted, (signal, split, language)
                assert all(0 <= figures[m] <= 1 for m in METRICS)
                assert figures["recall_at_1"] <= figures["recall_at_5"] <= figures["recall_at_10"]
    fused = run.figures["fused"]["all"]["all"]
    # The fused figures over all cases are the stored columns: the same ranking, counted twice.
    assert (fused["recall_at_1"], fused["recall_at_5"], fused["mrr"]) == pytest.approx(
        (run.recall_at_1, run.recall_at_5, run.mrr)
    )
    assert run.figures["fused"]["held-back"]["all"]["cases"] == 120
    assert run.failures and all(f["split"] in ("tune", "held-back") for f in run.failures)


def case(case_id: str, prompt: str, language: str, split: str, expected: str) -> dict[str, Any]:
    return {
        "id": case_id,
        "prompt": prompt,
        "language": language,
        "system": "condor",
        "profile": "clinical-production",
        "attachments": False,
        "multiEntityIntake": False,
        "expected": [expected],
        "split": split,
    }


@pytest.fixture
def own_cases(tmp_path: Path) -> Path:
    """One held-back case only the shared words find (a clipped spelling no meaning survives), and two tune cases."""
    path = tmp_path / "cases.json"
    cases = [
        case("lex-1", "drgintrctn chck", "en", "held-back", "checkDrugInteractions"),
        case(
            "tune-de", "Wechselwirkungen zwischen Ibuprofen und Marcumar prüfen", "de", "tune", "checkDrugInteractions"
        ),
        case("tune-en", "book her in with dr roth next tuesday", "en", "tune", "bookAppointment"),
    ]
    path.write_text(json.dumps({"format": "condor-retrieval-cases/v1", "cases": cases}), encoding="utf-8")
    return path


def test_a_case_only_shared_words_retrieve_shows_in_the_lexical_figures_alone(
    demo_embedded: None, own_cases: Path
) -> None:
    with CaptureQueriesContext(connection) as queries:
        run = retrieval_evaluate(cases_path=own_cases)
    assert len(queries) <= QUERIES_PER_CASE * 3 + QUERIES_PER_RUN
    held = {signal: run.figures[signal]["held-back"]["en"] for signal in FIGURE_SIGNALS}
    assert all(f["cases"] == 1 for f in held.values())
    assert held["lexical"]["recall_at_5"] == 1.0
    assert held["whole"]["recall_at_10"] == 0.0 and held["phrase"]["recall_at_10"] == 0.0
    assert run.figures["fused"]["held-back"]["de"] == {"cases": 0, **dict.fromkeys(METRICS)}
    assert run.figures["fused"]["tune"]["all"]["cases"] == 2 and run.figures["fused"]["tune"]["de"]["cases"] == 1
    assert run.figures["fused"]["all"]["all"]["cases"] == 3
    assert [f["split"] for f in run.failures if f["case"] == "lex-1"] == ["held-back"]


def test_eval_retrieval_prints_the_signal_tables(demo_embedded: None, own_cases: Path) -> None:
    out = io.StringIO()
    call_command("eval_retrieval", cases=own_cases, stdout=out)
    text = out.getvalue()
    assert "held back (never tuned on): en 1 cases, de 0 cases, all 1 cases" in text
    assert "tune (the ranking was chosen on these): en 1 cases, de 1 cases, all 2 cases" in text
    lexical = [line.split()[1:] for line in text.splitlines() if line.split()[:1] == ["lexical"]]
    held_back = lexical[0]  # held back is printed first, then tune
    # en: second by the shared words (recall@1 0, @5 1, MRR 1/2); de: no case, dashes; all: as en.
    assert held_back == ["0.000", "1.000", "1.000", "0.500", *["—"] * 4, "0.000", "1.000", "1.000", "0.500"]
    assert "lex-1 (held back): 'drgintrctn chck'" in text
