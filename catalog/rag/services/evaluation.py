"""Running the retrieval case set against the live catalog and storing the figures per catalog revision."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from catalog.domain.keys import canonical_key
from catalog.models import CatalogState, RetrievalEvaluation
from catalog.rag.domain.cases import Case, load_cases
from catalog.rag.domain.evaluation import FIGURE_SIGNALS, RankedCase, SplitCase, evaluate, split_figures
from catalog.rag.domain.resolution import Snapshot, why_not_message
from catalog.rag.embedders import Embedder, get_embedder
from catalog.rag.selectors.resolution import SnapshotRefused, snapshot_resolve

DEFAULT_CASES = Path(settings.BASE_DIR) / "catalog" / "demo" / "retrieval_cases.json"
EVAL_TOP_K = 10


@dataclass
class _Outcome:
    """What the case set did: the rankings scored, per language, how many reached the snapshot, and failures;
    `by_signal` holds each case's ranking by each signal with its split and language."""

    ranked: list[RankedCase] = field(default_factory=list)
    by_language: dict[str, list[RankedCase]] = field(default_factory=lambda: defaultdict(list))
    by_signal: dict[str, list[SplitCase]] = field(default_factory=lambda: defaultdict(list))
    reached: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


def retrieval_evaluate(*, cases_path: Path = DEFAULT_CASES, run_by: str = "cli") -> RetrievalEvaluation:
    """Resolve every case as the runtime would (its profile and flags, top-10) and store recall@1/5/10, MRR,
    the share of cases whose expected tools reach the candidate set, the failing cases, and the figures per
    signal, case split and language."""
    cases = load_cases(cases_path)
    embedder = get_embedder()
    outcome = _run_cases(cases, embedder)
    scores = evaluate(outcome.ranked)
    revisions = {
        system: number
        for system, number in CatalogState.objects.values_list("system", "current_revision__number")
        if number is not None
    }
    return RetrievalEvaluation.objects.create(
        run_by=run_by,
        model_id=embedder.model_id,
        revisions=revisions,
        cases_file=str(cases_path.name),
        cases=len(cases),
        recall_at_1=scores.recall[1],
        recall_at_5=scores.recall[5],
        recall_at_10=scores.recall[10],
        mrr=scores.mrr,
        in_snapshot=outcome.reached / len(cases),
        by_language={lang: _language_figures(items) for lang, items in sorted(outcome.by_language.items())},
        figures={signal: split_figures(outcome.by_signal[signal]) for signal in FIGURE_SIGNALS},
        failures=outcome.failures,
    )


def _run_cases(cases: list[Case], embedder: Embedder) -> _Outcome:
    outcome = _Outcome()
    # One embedder call for every prompt: the case set runs in a second or two, fine for a web request.
    vectors = embedder.embed([case.prompt for case in cases])
    for case, vector in zip(cases, vectors, strict=True):
        try:
            snapshot = snapshot_resolve(
                prompt=case.prompt,
                profile=case.profile or "clinical-production",
                attachments=case.attachments,
                multi_entity_intake=case.multi_entity_intake,
                top_k=EVAL_TOP_K,
                system=case.system,
                embedder=embedder,
                query_vector=vector,
            )
        except SnapshotRefused as exc:
            outcome.failures.append(
                {
                    "case": case.id,
                    "prompt": case.prompt,
                    "split": case.split,
                    "expected": case.expected,
                    "why": [str(exc)],
                }
            )
            continue
        _score_signals(outcome, case, snapshot)
        _score_case(outcome, case, snapshot)
    return outcome


def _score_signals(outcome: _Outcome, case: Case, snapshot: Snapshot) -> None:
    # Each signal ranks the eligible tools alone, as the fusion sees them; nothing ranked (an empty prompt, no
    # current vectors) is an empty ranking, which counts as a miss rather than leaving the case out.
    for signal in FIGURE_SIGNALS:
        ids = snapshot.ranks.by_signal(signal, EVAL_TOP_K) if snapshot.ranks is not None else []
        outcome.by_signal[signal].append(SplitCase(case.split, case.language, RankedCase(case.id, ids, case.expected)))


def _score_case(outcome: _Outcome, case: Case, snapshot: Snapshot) -> None:
    # Recall and MRR measure retrieval itself: the RAG ranking, before policy additions lead the set.
    item = RankedCase(case.id, [h.tool.declared_id for h in snapshot.ranking[:EVAL_TOP_K]], case.expected)
    outcome.ranked.append(item)
    outcome.by_language[case.language].append(item)
    if {canonical_key(x) for x in case.expected} <= set(snapshot.tool_ids):
        outcome.reached += 1
        return
    why = [why_not_message(snapshot, x) for x in case.expected if canonical_key(x) not in snapshot.tool_ids]
    outcome.failures.append(
        {
            "case": case.id,
            "prompt": case.prompt,
            "language": case.language,
            "split": case.split,
            "expected": case.expected,
            "top": [h.tool.declared_id for h in snapshot.ranking[:3]],
            "why": [m.render() for m in why],
            # The same sentences kept for the quality page to show in the reader's language (catalog.domain.messages).
            "why_text": [m.as_json() for m in why],
        }
    )


def _language_figures(items: list[RankedCase]) -> dict[str, float | int]:
    scores = evaluate(items)
    return {"cases": len(items), "recall_at_5": scores.recall[5], "mrr": scores.mrr}
