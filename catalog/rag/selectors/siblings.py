"""Sibling near-duplicates of one system from its stored vectors (the `sibling-near-duplicate` rule's input), and
what the incremental refresh reads: the current vectors with their checked marks, and the pairs stored as findings."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db.models import F

from catalog.models import Finding, ToolEmbedding
from catalog.rag.domain.siblings import near_duplicate_pairs
from catalog.rag.embedders import configured_model_id

RULE = "sibling-near-duplicate"


@dataclass(frozen=True)
class SystemVectors:
    """The current vectors of a system's live tools, in tool id order: row i is tool `tool_pks[i]`."""

    embedding_pks: list[int]
    tool_pks: list[int]
    declared: list[str]
    checked: list[bool]
    matrix: np.ndarray


def system_vectors(system: str, *, model_id: str | None = None) -> SystemVectors:
    """One query; the vectors only (not their phrases, which are most of each row's bytes)."""
    rows = list(
        ToolEmbedding.objects.filter(
            model_id=model_id or configured_model_id(),
            tool__system=system,
            tool__retired_in__isnull=True,
            text_sha256=F("tool__rag_text_sha256"),
        )
        .order_by("tool_id")
        .values_list("pk", "tool_id", "tool__declared_id", "siblings_checked", "vector")
    )
    if not rows:
        return SystemVectors([], [], [], [], np.zeros((0, 0), dtype=np.float32))
    matrix = np.vstack([np.frombuffer(bytes(r[4]), dtype="<f4") for r in rows])
    return SystemVectors([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows], matrix)


def sibling_pairs_for(system: str) -> list[tuple[str, str, float]]:
    """(declared id a, declared id b, cosine) of the system's live tools whose current vectors collide."""
    vectors = system_vectors(system)
    if len(vectors.tool_pks) < 2:
        return []
    return near_duplicate_pairs(vectors.declared, vectors.matrix, settings.CONDOR_SIBLING_THRESHOLD)


def stored_sibling_pairs(system: str, *, touching: Collection[str] | None = None) -> set[tuple[str, str]]:
    """(declared id a, declared id b), a < b, of the system's stored sibling findings (those touching one of
    `touching`, when given); one query."""
    rows = Finding.objects.filter(system=system, rule=RULE, tool__isnull=False)
    if touching is not None:
        rows = rows.filter(tool__declared_id__in=list(touching))
    pairs: set[tuple[str, str]] = set()
    for this, details in rows.values_list("tool__declared_id", "details"):
        other = (details or {}).get("other")
        if other:
            pairs.add((min(this, other), max(this, other)))
    return pairs


def systems_awaiting_siblings(*, model_id: str | None = None) -> list[str]:
    """Systems with a current vector the sibling findings do not account for yet (a refresh lost with its worker,
    or not yet run); reads the partial index of unchecked vectors."""
    rows = ToolEmbedding.objects.filter(
        model_id=model_id or configured_model_id(),
        siblings_checked=False,
        tool__retired_in__isnull=True,
        text_sha256=F("tool__rag_text_sha256"),
    )
    return sorted(set(rows.values_list("tool__system", flat=True).distinct()))
