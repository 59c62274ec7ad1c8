"""Running the retrieval case set against the live catalog and storing the figures per catalog revision."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from catalog.domain.keys import canonical_key
from catalog.models import CatalogState, RetrievalEvaluation
from catalog.rag.embedders import get_embedder
from catalog.rag.evaluation import RankedCase, evaluate
from catalog.rag.resolve import ResolveError, rag_resolve, why_not

CASES_FORMAT = "condor-retrieval-cases/v1"
DEFAULT_CASES = Path(settings.BASE_DIR) / "catalog" / "demo" / "retrieval_cases.json"
EVAL_TOP_K = 10


class CasesError(ValueError):
    pass


@dataclass(frozen=True)
class Case:
    id: str
    prompt: str
    language: str
    system: str
    profile: str | None
    attachments: bool
    multi_entity_intake: bool
    expected: list[str]


def load_cases(path: Path) -> list[Case]:
    """Parse a case file; every problem names the case and field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CasesError(f"{path}: cannot read the case file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != CASES_FORMAT:
        raise CasesError(f"{path}: format must be {CASES_FORMAT!r}")
    cases: list[Case] = []
    for i, raw in enumerate(data.get("cases") or []):
        where = f"{path.name}: cases[{i}]"
        try:
            case = Case(
                id=str(raw["id"]),
                prompt=str(raw["prompt"]),
                language=str(raw.get("language", "")),
                system=str(raw.get("system", "condor")),
                profile=raw.get("profile"),
                attachments=bool(raw.get("attachments", False)),
                multi_entity_intake=bool(raw.get("multiEntityIntake", False)),
                expected=[str(x) for x in raw["expected"]],
            )
        except (KeyError, TypeError) as exc:
            raise CasesError(f"{where}: missing or malformed field {exc}") from exc
        if not case.prompt.strip() or not case.expected:
            raise CasesError(f"{where} ({case.id}): prompt and expected are required")
        cases.append(case)
    if not cases:
        raise CasesError(f"{path}: no cases")
    return cases


def retrieval_evaluate(*, cases_path: Path = DEFAULT_CASES, run_by: str = "cli") -> RetrievalEvaluation:
    """Resolve every case as the runtime would (its profile and flags, top-10) and store recall@1/5/10, MRR,
    the share of cases whose expected tools reach the candidate set, and the failing cases."""
    cases = load_cases(cases_path)
    embedder = get_embedder()
    ranked: list[RankedCase] = []
    by_language: dict[str, list[RankedCase]] = defaultdict(list)
    reached = 0
    failures: list[dict[str, Any]] = []
    # One embedder call for every prompt: the case set runs in a second or two, fine for a web request.
    vectors = embedder.embed([case.prompt for case in cases])
    for case, vector in zip(cases, vectors, strict=True):
        try:
            snapshot = rag_resolve(
                prompt=case.prompt,
                profile=case.profile or "clinical-production",
                attachments=case.attachments,
                multi_entity_intake=case.multi_entity_intake,
                top_k=EVAL_TOP_K,
                system=case.system,
                embedder=embedder,
                query_vector=vector,
            )
        except ResolveError as exc:
            failures.append({"case": case.id, "prompt": case.prompt, "expected": case.expected, "why": [str(exc)]})
            continue
        # Recall and MRR measure retrieval itself: the RAG ranking, before policy additions lead the set.
        item = RankedCase(case.id, [h.tool.declared_id for h in snapshot.ranking[:EVAL_TOP_K]], case.expected)
        ranked.append(item)
        by_language[case.language].append(item)
        expected_keys = {canonical_key(x) for x in case.expected}
        if expected_keys <= set(snapshot.tool_ids):
            reached += 1
        else:
            failures.append(
                {
                    "case": case.id,
                    "prompt": case.prompt,
                    "language": case.language,
                    "expected": case.expected,
                    "top": [h.tool.declared_id for h in snapshot.ranking[:3]],
                    "why": [why_not(snapshot, x) for x in case.expected if canonical_key(x) not in snapshot.tool_ids],
                }
            )
    scores = evaluate(ranked)
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
        in_snapshot=reached / len(cases),
        by_language={lang: _language_figures(items) for lang, items in sorted(by_language.items())},
        failures=failures,
    )


def _language_figures(items: list[RankedCase]) -> dict[str, float | int]:
    scores = evaluate(items)
    return {"cases": len(items), "recall_at_5": scores.recall[5], "mrr": scores.mrr}
