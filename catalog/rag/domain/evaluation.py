"""Retrieval quality: recall@k and MRR over cases whose expected tools are known.

Pure code (no Django): the caller ranks tools however it likes (cosine over stored vectors, a hybrid, an
HTTP service) and hands over, per case, the ranked ids and the expected ids. Ids are compared by canonical
key, so `visitRecordingCard` and `visit-recording-card` are the same tool here as everywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from catalog.domain.keys import canonical_key

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
