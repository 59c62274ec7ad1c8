from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.rag.domain.cases import HELD_BACK, TUNE, CasesError
from catalog.rag.domain.evaluation import ALL, FIGURE_SIGNALS, METRICS, figure_rows, revisions_label
from catalog.rag.services.evaluation import DEFAULT_CASES, retrieval_evaluate

SPLIT_TITLES = {HELD_BACK: "held back (never tuned on)", TUNE: "tune (the ranking was chosen on these)"}
LANGUAGES = ("en", "de", ALL)


class Command(BaseCommand):
    help = (
        "Run the retrieval case set against the live catalog: recall@1/5/10, MRR (fused, and per signal, case "
        "split and language), failing cases (stored)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="a condor-retrieval-cases/v1 file")
        parser.add_argument("--failures", type=int, default=20, help="failing cases to print (default 20)")

    def handle(self, *args: Any, cases: Path, failures: int, **options: Any) -> None:
        try:
            run = retrieval_evaluate(cases_path=cases, run_by="cli")
        except CasesError as exc:
            raise CommandError(str(exc)) from exc
        revisions = revisions_label(run.revisions) or "no catalog"
        self.stdout.write(f"{run.cases} cases from {run.cases_file}; {revisions}; model {run.model_id}")
        self.stdout.write(
            f"recall@1 {run.recall_at_1:.3f}  recall@5 {run.recall_at_5:.3f}  recall@10 {run.recall_at_10:.3f}  "
            f"MRR {run.mrr:.3f}  in candidate set {run.in_snapshot:.3f}"
        )
        for lang, figures in run.by_language.items():
            self.stdout.write(
                f"  {lang}: {figures['cases']} cases, recall@5 {figures['recall_at_5']:.3f}, MRR {figures['mrr']:.3f}"
            )
        self._signal_tables(run.figures)
        self.stdout.write(f"{len(run.failures)} case(s) whose expected tool did not reach the candidate set")
        for failure in run.failures[:failures]:
            split = " (held back)" if failure.get("split") == HELD_BACK else ""
            self.stdout.write(f"  {failure['case']}{split}: {failure['prompt']!r}")
            for why in failure["why"]:
                self.stdout.write(f"      {why}")

    def _signal_tables(self, figures: dict[str, Any]) -> None:
        """Per split: one row per signal, recall@1 / @5 / @10 / MRR of each language side by side."""
        for split in (HELD_BACK, TUNE):
            columns = {lang: figure_rows(figures, split, lang, FIGURE_SIGNALS) for lang in LANGUAGES}
            counts = ", ".join(f"{lang} {_cases(rows)} cases" for lang, rows in columns.items())
            self.stdout.write(f"{SPLIT_TITLES[split]}: {counts}; recall@1 @5 @10 MRR each")
            self.stdout.write(f"  {'signal':<9}" + "".join(f"{lang:<25}" for lang in LANGUAGES).rstrip())
            for n, signal in enumerate(FIGURE_SIGNALS):
                cells = "".join(f"{_group(rows[n][1]):<25}" for rows in columns.values())
                self.stdout.write(f"  {signal:<9}{cells}".rstrip())


def _cases(rows: list[tuple[str, dict[str, Any] | None]]) -> int:
    figures = rows[0][1]
    return int(figures["cases"]) if figures else 0


def _group(figures: dict[str, Any] | None) -> str:
    """Four figures ("0.850 0.967 0.983 0.901"); a dash where there is none (no case in this split and language)."""
    values = [figures.get(metric) if figures else None for metric in METRICS]
    return " ".join(f"{v:.3f}" if v is not None else "  —  " for v in values)
