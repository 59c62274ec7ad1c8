from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.rag.domain.cases import CasesError
from catalog.rag.services.evaluation import DEFAULT_CASES, retrieval_evaluate


class Command(BaseCommand):
    help = "Run the retrieval case set against the live catalog: recall@1/5/10, MRR, failing cases (stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="a condor-retrieval-cases/v1 file")
        parser.add_argument("--failures", type=int, default=20, help="failing cases to print (default 20)")

    def handle(self, *args: Any, cases: Path, failures: int, **options: Any) -> None:
        try:
            run = retrieval_evaluate(cases_path=cases, run_by="cli")
        except CasesError as exc:
            raise CommandError(str(exc)) from exc
        revisions = ", ".join(f"{s} r{n}" for s, n in sorted(run.revisions.items())) or "no catalog"
        self.stdout.write(f"{run.cases} cases from {run.cases_file}; {revisions}; model {run.model_id}")
        self.stdout.write(
            f"recall@1 {run.recall_at_1:.3f}  recall@5 {run.recall_at_5:.3f}  recall@10 {run.recall_at_10:.3f}  "
            f"MRR {run.mrr:.3f}  in candidate set {run.in_snapshot:.3f}"
        )
        for lang, figures in run.by_language.items():
            self.stdout.write(
                f"  {lang}: {figures['cases']} cases, recall@5 {figures['recall_at_5']:.3f}, MRR {figures['mrr']:.3f}"
            )
        self.stdout.write(f"{len(run.failures)} case(s) whose expected tool did not reach the candidate set")
        for failure in run.failures[:failures]:
            self.stdout.write(f"  {failure['case']}: {failure['prompt']!r}")
            for why in failure["why"]:
                self.stdout.write(f"      {why}")
