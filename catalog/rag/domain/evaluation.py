"""Retrieval quality: recall@k and MRR over cases whose expected tools are known.

Pure code (no Django): the caller ranks tools however it likes (cosine over stored vectors, a hybrid, an
HTTP service) and hands over, per case, the ranked ids and the expected ids. Ids are compared by canonical
key, so `visitRecordingCard` and `visit-recording-card` are the same tool here as everywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog.domain.keys import canonical_key
from catalog.rag.domain.cases import HELD_BACK, TUNE
from catalog.rag.domain.hybrid import SIGNALS
from catalog.rag.domain.ranking import FUSED

DEFAULT_KS = (1, 5, 10)


@dataclass(frozen=True)
class RankedCase:
    """One case's retrieval: `retrieved` best first; `expected` the tools the prompt asks for."""

    case_id: str
    retrieved: Sequence[str]
    expected: Sequence[str]


@dataclass(frozen=True)
class Miss:
    """An expected tool outside the failure cut-off; `rank` is 1-based, None when it was not retrieved."""

    expected_id: str
    rank: int | None


@dataclass(frozen=True)
class Failure:
    case_id: str
    misses: tuple[Miss, ...]


@dataclass(frozen=True)
class RetrievalScores:
    cases: int
    recall: dict[int, float]
    mrr: float
    failure_k: int
    failures: list[Failure] = field(default_factory=list)

    def recall_at(self, k: int) -> float:
        return self.recall[k]


def _unique_keys(ids: Iterable[str]) -> list[str]:
    """Canonical keys in first-seen order: a tool retrieved under two spellings counts once, at its first rank."""
    seen: dict[str, None] = {}
    for tool_id in ids:
        seen.setdefault(canonical_key(tool_id), None)
    return list(seen)


def evaluate(cases: Iterable[RankedCase], *, ks: Sequence[int] = DEFAULT_KS, failure_k: int = 5) -> RetrievalScores:
    """Recall@k: the fraction of a case's expected tools found in its top k, averaged over cases.
    MRR: the mean of 1/rank of the first expected tool retrieved (0 when none is).
    A case fails when any expected tool ranks below `failure_k` or is missing; each miss keeps its rank."""
    if any(k < 1 for k in ks) or failure_k < 1:
        raise ValueError(f"k must be at least 1 (ks={list(ks)}, failure_k={failure_k})")
    recall_sums = dict.fromkeys(ks, 0.0)
    reciprocal_sum = 0.0
    failures: list[Failure] = []
    count = 0
    for case in cases:
        expected: dict[str, str] = {}
        for declared in case.expected:
            expected.setdefault(canonical_key(declared), declared)
        if not expected:
            raise ValueError(f"case {case.case_id}: no expected tool ids; recall is undefined without them")
        ranks = {key: position for position, key in enumerate(_unique_keys(case.retrieved), start=1)}
        found = sorted(ranks[key] for key in expected if key in ranks)
        for k in ks:
            recall_sums[k] += sum(1 for rank in found if rank <= k) / len(expected)
        reciprocal_sum += 1.0 / found[0] if found else 0.0
        misses = tuple(
            Miss(expected_id=declared, rank=ranks.get(key))
            for key, declared in expected.items()
            if ranks.get(key) is None or ranks[key] > failure_k
        )
        if misses:
            failures.append(Failure(case_id=case.case_id, misses=misses))
        count += 1
    if count == 0:
        raise ValueError("no cases to evaluate")
    return RetrievalScores(
        cases=count,
        recall={k: recall_sums[k] / count for k in ks},
        mrr=reciprocal_sum / count,
        failure_k=failure_k,
        failures=failures,
    )


# Figures per signal, case split and language (what `/rag/quality/` and `eval_retrieval` report): the fused
# ranking, then each signal alone (whole text, best phrase, lexical). "all" pools the splits or languages.
FIGURE_SIGNALS = (FUSED, *SIGNALS)
ALL = "all"
FIGURE_SPLITS = (ALL, TUNE, HELD_BACK)
FIGURE_LANGUAGES = (ALL, "en", "de")
METRICS = ("recall_at_1", "recall_at_5", "recall_at_10", "mrr")
Figures = dict[str, float | int | None]


@dataclass(frozen=True)
class SplitCase:
    """One case's ranking by one signal, with the split and language it is counted under."""

    split: str
    language: str
    ranked: RankedCase


def case_figures(items: Sequence[RankedCase]) -> Figures:
    """Cases, recall@1/5/10 and MRR; the metrics are None when there is no case (nothing to average)."""
    if not items:
        return {"cases": 0, **dict.fromkeys(METRICS)}
    scores = evaluate(items)
    return {
        "cases": scores.cases,
        "recall_at_1": scores.recall[1],
        "recall_at_5": scores.recall[5],
        "recall_at_10": scores.recall[10],
        "mrr": scores.mrr,
    }


def split_figures(cases: Sequence[SplitCase]) -> dict[str, dict[str, Figures]]:
    """{split: {language: figures}} for every split and language, "all" pooling each; a language outside
    FIGURE_LANGUAGES counts only under "all"."""
    return {
        split: {
            language: case_figures(
                [c.ranked for c in cases if split in (ALL, c.split) and language in (ALL, c.language)]
            )
            for language in FIGURE_LANGUAGES
        }
        for split in FIGURE_SPLITS
    }


def figure_rows(
    figures: Mapping[str, Any], split: str, language: str, signals: Sequence[str]
) -> list[tuple[str, Figures | None]]:
    """Each signal's figures for one split and language, in `signals` order; None where the run has none
    (a run stored before figures were recorded)."""
    return [(signal, figures.get(signal, {}).get(split, {}).get(language)) for signal in signals]


LABEL_SEPARATOR = " · "


def revisions_label(revisions: Mapping[str, Any]) -> str:
    """{"tucan": 1, "condor": 3} → "condor r3 · tucan r1": which catalog a run measured."""
    return LABEL_SEPARATOR.join(f"{system} r{number}" for system, number in sorted(revisions.items()))


# The trend chart at the top of /rag/quality/: one x slot per run (oldest left), y 0..1, drawn in viewBox units
# so it scales to the page; designed for a 390 px phone first (one unit is about one CSS pixel there).
CHART_WIDTH = 320.0
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_HEIGHT = 34.0, 314.0, 8.0, 150.0
FONT = 12.0
CHAR_WIDTH = 0.55 * FONT  # a generous estimate of one glyph's advance: labels are laid out before any font is known
GRID = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class TrendRun:
    """One run on the chart: its revisions label, and one value per series (None: the run has no such figure)."""

    label: str
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class TrendPoint:
    series: int
    x: float
    y: float
    value: float


@dataclass(frozen=True)
class TrendLabel:
    """A run of consecutive points measured on the same revisions, labelled once under them."""

    text: str
    lines: tuple[str, ...]  # the text one system per line (horizontal labels)
    x: float  # where the label is anchored
    y: float
    x1: float  # the group's first and last point: the bracket under them
    x2: float
    rotated: bool


@dataclass(frozen=True)
class TrendChart:
    width: float
    height: float
    plot_left: float
    plot_right: float
    plot_bottom: float
    grid: list[tuple[float, str]]  # (y, "0.75")
    xs: list[float]  # each run's x, in run order
    points: list[list[TrendPoint]]  # per run, in run order
    lines: list[list[str]]  # per series: polyline point lists, broken where a run has no value
    labels: list[TrendLabel]


def _y(value: float) -> float:
    return round(PLOT_TOP + (1.0 - min(max(value, 0.0), 1.0)) * PLOT_HEIGHT, 1)


def _groups(runs: Sequence[TrendRun]) -> list[tuple[int, int, str]]:
    """(first, last, label) for each stretch of consecutive runs with the same revisions."""
    groups: list[tuple[int, int, str]] = []
    for n, run in enumerate(runs):
        if groups and groups[-1][2] == run.label:
            groups[-1] = (groups[-1][0], n, run.label)
        else:
            groups.append((n, n, run.label))
    return groups


def trend_chart(runs: Sequence[TrendRun], series: int) -> TrendChart:
    """Points, lines and revision labels for `runs` (oldest first); `series` values per run. A run without a
    value breaks that series' line rather than being drawn as 0."""
    slot = (PLOT_RIGHT - PLOT_LEFT) / max(len(runs), 1)
    xs = [round(PLOT_LEFT + (n + 0.5) * slot, 1) for n in range(len(runs))]
    points = [
        [TrendPoint(s, xs[n], _y(v), v) for s, v in enumerate(run.values[:series]) if v is not None]
        for n, run in enumerate(runs)
    ]
    lines: list[list[str]] = []
    for s in range(series):
        segments: list[list[str]] = [[]]
        for n, run in enumerate(runs):
            value = run.values[s] if s < len(run.values) else None
            if value is None:
                segments.append([])
            else:
                segments[-1].append(f"{xs[n]},{_y(value)}")
        lines.append([" ".join(seg) for seg in segments if len(seg) > 1])
    bottom = PLOT_TOP + PLOT_HEIGHT
    labels, below = _labels(runs, xs, slot, bottom)
    grid = [(_y(v), f"{v:g}") for v in GRID]
    return TrendChart(
        CHART_WIDTH, round(bottom + below, 1), PLOT_LEFT, PLOT_RIGHT, bottom, grid, xs, points, lines, labels
    )


def _labels(runs: Sequence[TrendRun], xs: list[float], slot: float, bottom: float) -> tuple[list[TrendLabel], float]:
    """One label per group of runs on the same revisions, and the height they need under the plot. Horizontal,
    one system per line, when every line fits its group's slots; otherwise all vertical, one line each (a slot is
    wider than a line is high for up to 30 runs, so vertical labels never overlap)."""
    groups = _groups(runs)
    split = {text: tuple(text.split(LABEL_SEPARATOR)) for _, _, text in groups}
    rotated = any(
        max(len(line) for line in split[text]) * CHAR_WIDTH > (last - first + 1) * slot - 4
        for first, last, text in groups
    )
    labels = [
        TrendLabel(
            text=text,
            lines=split[text],
            x=round((xs[first] + xs[last]) / 2, 1),
            y=bottom + 10 if rotated else bottom + 10 + FONT,
            x1=xs[first],
            x2=xs[last],
            rotated=rotated,
        )
        for first, last, text in groups
    ]
    if rotated:
        return labels, 14 + max(len(text) for _, _, text in groups) * CHAR_WIDTH
    return labels, 14 + FONT * max((len(lines) for lines in split.values()), default=1)
