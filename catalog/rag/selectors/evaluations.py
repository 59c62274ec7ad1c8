"""Stored retrieval evaluation runs, newest first, and what the quality page draws from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalog.models import RetrievalEvaluation
from catalog.rag.domain.cases import HELD_BACK, TUNE
from catalog.rag.domain.evaluation import (
    ALL,
    FIGURE_SIGNALS,
    Figures,
    TrendChart,
    TrendPoint,
    TrendRun,
    figure_rows,
    revisions_label,
    trend_chart,
)
from catalog.rag.domain.ranking import FUSED

# The chart's series, in drawing order: held-back fused recall@1 and @5 (the honest figures), tune recall@1.
TREND_SERIES = ((HELD_BACK, "recall_at_1"), (HELD_BACK, "recall_at_5"), (TUNE, "recall_at_1"))
TABLE_LANGUAGES = ("en", "de")


@dataclass(frozen=True)
class SignalTable:
    """One split and language of a run: cases counted, and each signal's figures (None: not recorded)."""

    split: str
    language: str
    cases: int | None
    rows: list[tuple[str, Figures | None]]


@dataclass(frozen=True)
class RunLine:
    """A stored run with its revisions label and its trend values (one per TREND_SERIES, None: not recorded)."""

    run: RetrievalEvaluation
    label: str
    trend: tuple[float | None, ...]


@dataclass(frozen=True)
class QualityOverview:
    lines: list[RunLine]  # newest first
    latest: RetrievalEvaluation | None
    chart: TrendChart | None
    marks: list[tuple[RunLine, list[TrendPoint], float]]  # the chart's runs oldest first: points, x
    tables: list[SignalTable]  # the latest run: held back first, then tune; en, then de
    splits: list[tuple[str, int]]  # the latest run's cases per split (empty: stored before splits were counted)


def retrieval_evaluations_list(*, limit: int = 20) -> list[RetrievalEvaluation]:
    """The newest runs (one query); the model orders them newest first."""
    return list(RetrievalEvaluation.objects.all()[:limit])


def quality_overview(*, limit: int = 20) -> QualityOverview:
    """The newest runs (one query), the trend chart over them and the latest run's per-signal tables."""
    lines = [
        RunLine(r, revisions_label(r.revisions), _trend_values(r.figures))
        for r in retrieval_evaluations_list(limit=limit)
    ]
    if not lines:
        return QualityOverview([], None, None, [], [], [])
    oldest_first = lines[::-1]
    chart = trend_chart([TrendRun(line.label, line.trend) for line in oldest_first], len(TREND_SERIES))
    latest = lines[0].run
    marks = list(zip(oldest_first, chart.points, chart.xs, strict=True))
    return QualityOverview(lines, latest, chart, marks, _tables(latest.figures), _splits(latest.figures))


def _trend_values(figures: dict[str, Any]) -> tuple[float | None, ...]:
    fused = figures.get(FUSED, {})
    return tuple(fused.get(split, {}).get(ALL, {}).get(metric) for split, metric in TREND_SERIES)


def _tables(figures: dict[str, Any]) -> list[SignalTable]:
    tables = []
    for split in (HELD_BACK, TUNE):
        for language in TABLE_LANGUAGES:
            rows = figure_rows(figures, split, language, FIGURE_SIGNALS)
            counted = rows[0][1]
            tables.append(SignalTable(split, language, int(counted["cases"] or 0) if counted else None, rows))
    return tables


def _splits(figures: dict[str, Any]) -> list[tuple[str, int]]:
    fused = figures.get(FUSED, {})
    return [(split, int(fused[split][ALL]["cases"])) for split in (HELD_BACK, TUNE) if split in fused]
