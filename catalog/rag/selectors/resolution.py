"""Snapshot resolution: a prompt and a profile → one immutable snapshot (TOOLS.md, "Resolution").

This checks the request, embeds the prompt and finds the system's index; the resolution itself is pure
(`catalog.rag.domain.resolution`).
"""

from __future__ import annotations

import numpy as np
from django.conf import settings

from catalog.rag.domain.hybrid import RankingConfig
from catalog.rag.domain.index import IndexedProfile, RagIndex, SystemIndex
from catalog.rag.domain.resolution import Request, Snapshot, assemble_snapshot
from catalog.rag.embedders import Embedder, get_embedder
from catalog.rag.selectors.index import rag_index


class SnapshotRefused(Exception):
    """A request the caller must fix (unknown profile or system, bad top-k); the text says what to fix."""


def snapshot_resolve(
    *,
    prompt: str,
    profile: str,
    attachments: bool = False,
    multi_entity_intake: bool = False,
    top_k: int | None = None,
    byte_budget: int | None = None,
    system: str | None = None,
    embedder: Embedder | None = None,
    query_vector: np.ndarray | None = None,
) -> Snapshot:
    """`query_vector`: the prompt's vector when the caller embedded many prompts at once (the case set)."""
    embedder = embedder or get_embedder()
    top_k = _checked_top_k(top_k)
    if byte_budget is not None and byte_budget < 0:
        raise SnapshotRefused(f"byteBudget: {byte_budget} must be 0 or more bytes")
    index = rag_index(embedder.model_id)
    profile_view = _profile(index, profile)
    system = system or profile_view.system
    system_index = _system_index(index, system, clinical=profile_view.clinical)
    query = None
    if system_index.retrievable and prompt.strip():  # no embedder call when nothing can be ranked
        query = query_vector if query_vector is not None else embedder.embed([prompt])[0]
    request = Request(
        system=system,
        profile=profile_view,
        model_id=embedder.model_id,
        query=query,
        attachments=attachments,
        multi_entity_intake=multi_entity_intake,
        top_k=top_k,
        min_score=settings.CONDOR_RAG_MIN_SCORE,
        byte_budget=byte_budget,
        prompt=prompt,
        ranking=ranking_config(),
    )
    return assemble_snapshot(system_index, request)


def ranking_config() -> RankingConfig:
    """The hybrid ranking as configured (catalog/rag/README.md, "Fusion"): equal weights, chosen on the tuning cases."""
    return RankingConfig(
        fusion=settings.CONDOR_RAG_FUSION,
        shortlist=settings.CONDOR_RAG_SHORTLIST,
        negative_weight=settings.CONDOR_RAG_NEGATIVE_WEIGHT,
    )


def _checked_top_k(top_k: int | None) -> int:
    top_k = settings.CONDOR_RAG_TOP_K if top_k is None else top_k
    if not 1 <= top_k <= settings.CONDOR_RAG_MAX_TOP_K:
        raise SnapshotRefused(f"topK: {top_k} is out of range; choose 1..{settings.CONDOR_RAG_MAX_TOP_K}")
    return top_k


def _profile(index: RagIndex, slug: str) -> IndexedProfile:
    found = index.profiles.get(slug)
    if found is None:
        known = ", ".join(sorted(index.profiles)) or "none"
        raise SnapshotRefused(f"profile: {slug!r} is not a catalog profile (known: {known})")
    return found


def _system_index(index: RagIndex, system: str, *, clinical: bool) -> SystemIndex:
    """The system's index as the profile sees it: a clinical profile retrieves over what is in effect."""
    found = index.served(system, clinical=clinical)
    if found is None:
        raise SnapshotRefused(f"system: {system!r} has no imported catalog (known: {', '.join(sorted(index.systems))})")
    return found
