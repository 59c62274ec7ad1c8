"""The candidate snapshot: ordering, key normalization and the byte-budget ladder, as plain functions.

The seed's order (condor-tool-catalog.service.ts): policy additions — forced floors whose trigger is set,
then alwaysInclude tools — are *prepended* ahead of the RAG hits. The degradation ladder sheds from the
tail (lowest RAG rank first), so a tail-appended floor would be the first thing lost. Every candidate id is
normalized to its canonical registry key and its activation reasons move with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from catalog.domain.keys import canonical_key

RAG_RETRIEVED = "rag-retrieved"
ALWAYS_INCLUDE = "always-include"
FORCED_FLOOR = "forced-floor"  # the reason reads "forced-floor:<floor id>"


@dataclass(frozen=True)
class Proposed:
    """A candidate as a step proposed it, in whatever spelling that step used."""

    tool_id: str
    reason: str
    score: float | None = None
    rank: int | None = None  # RAG rank (1 = best), None for policy additions


@dataclass
class Candidate:
    key: str  # canonical registry key
    declared_id: str
    reasons: list[str]
    score: float | None = None
    rank: int | None = None

    @property
    def policy(self) -> bool:
        """Added by policy (a floor or alwaysInclude): shed last."""
        return any(r != RAG_RETRIEVED for r in self.reasons)


@dataclass(frozen=True)
class Dropped:
    tool_id: str
    reason: str


@dataclass
class Ordered:
    candidates: list[Candidate]
    dropped: list[Dropped] = field(default_factory=list)


def order_candidates(
    *,
    policy_additions: Sequence[Proposed],
    rag_hits: Sequence[Proposed],
    registry: Mapping[str, str],
    eligible: Mapping[str, bool],
) -> Ordered:
    """Policy additions first (in their order), then RAG hits by rank; ids normalized to canonical keys,
    duplicates collapsed keeping every reason. `registry` maps canonical key → declared id of the live tools;
    ids not in it are dropped and reported, as are policy additions not plan-eligible under the profile."""
    by_key: dict[str, Candidate] = {}
    order: list[str] = []
    dropped: list[Dropped] = []
    for proposed in [*policy_additions, *sorted(rag_hits, key=lambda p: p.rank or 0)]:
        key = canonical_key(proposed.tool_id)
        declared = registry.get(key)
        if declared is None:
            dropped.append(Dropped(proposed.tool_id, f"not in the registry ({proposed.reason})"))
            continue
        if not eligible.get(key, False):
            dropped.append(Dropped(proposed.tool_id, f"not plan-eligible under the profile ({proposed.reason})"))
            continue
        existing = by_key.get(key)
        if existing is None:
            by_key[key] = Candidate(key, declared, [proposed.reason], proposed.score, proposed.rank)
            order.append(key)
            continue
        if proposed.reason not in existing.reasons:
            existing.reasons.append(proposed.reason)
        if proposed.score is not None and existing.score is None:
            existing.score, existing.rank = proposed.score, proposed.rank
    return Ordered([by_key[k] for k in order], dropped)


def shed_to_budget(
    candidates: Sequence[Candidate], line_bytes: Mapping[str, int], budget: int | None
) -> tuple[list[Candidate], list[Candidate]]:
    """The degradation ladder: while the manifest lines exceed the budget, shed RAG-only candidates from the
    tail (lowest rank first); policy additions go last, also from the tail. Returns (kept, shed in shed order)."""
    kept = list(candidates)
    shed: list[Candidate] = []
    if budget is None:
        return kept, shed
    total = sum(line_bytes[c.key] for c in kept)
    for policy_pass in (False, True):
        for candidate in reversed(list(kept)):
            if total <= budget:
                return kept, shed
            if candidate.policy != policy_pass:
                continue
            kept.remove(candidate)
            shed.append(candidate)
            total -= line_bytes[candidate.key]
    return kept, shed


def candidate_set_id(tool_keys: Sequence[str], catalog_revisions: Sequence[object]) -> str:
    """A stable id for one ordered candidate set under one catalog revision."""
    body = "|".join(str(r) for r in catalog_revisions) + "\n" + "\n".join(tool_keys)
    return "cs_" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:32]
