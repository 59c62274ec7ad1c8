"""Which tools need a vector, how many are current, and the current vectors themselves.

A vector is current when it was made by the configured model from the text the tool has now
(`ToolEmbedding.text_sha256 == Tool.rag_text_sha256`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import numpy as np
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery

from catalog.models import Tool, ToolEmbedding
from catalog.rag.embedders import configured_model_id

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class VectorHash(TypedDict):
    """The text hash of the tool's stored vector for one model; None when it has none."""

    vector_sha: str | None


def embeddable_tools() -> QuerySet[Tool]:
    """Live tools with text to embed (a tool with no ragDescription and no keywords is never a candidate)."""
    return Tool.objects.live().exclude(rag_text_sha256="")


def with_vector_hash(tools: QuerySet[Tool], model_id: str) -> QuerySet[WithAnnotations[Tool, VectorHash]]:
    """The tools annotated with `vector_sha`, the text hash of their stored vector for the model."""
    vector = ToolEmbedding.objects.filter(tool=OuterRef("pk"), model_id=model_id).values("text_sha256")[:1]
    return tools.annotate(vector_sha=Subquery(vector))


def tools_needing_vectors(*, model_id: str | None = None, system: str | None = None) -> list[int]:
    """Ids of live tools whose vector for the model is missing or stale, in id order (one query)."""
    tools = embeddable_tools()
    if system:
        tools = tools.filter(system=system)
    annotated = with_vector_hash(tools, model_id or configured_model_id())
    stale = Q(vector_sha__isnull=True) | ~Q(vector_sha=F("rag_text_sha256"))
    return list(annotated.filter(stale).order_by("pk").values_list("pk", flat=True))


@dataclass(frozen=True)
class EmbeddingStatus:
    model_id: str
    embedded: int
    stale: int
    missing: int

    @property
    def total(self) -> int:
        return self.embedded + self.stale + self.missing


def embedding_status(*, system: str | None = None) -> EmbeddingStatus:
    """Embedded / stale / missing counts of live tools for the configured model (one query)."""
    model_id = configured_model_id()
    tools = embeddable_tools()
    if system:
        tools = tools.filter(system=system)
    counts = with_vector_hash(tools, model_id).aggregate(
        embedded=Count("pk", filter=Q(vector_sha=F("rag_text_sha256"))),
        missing=Count("pk", filter=Q(vector_sha__isnull=True)),
        total=Count("pk"),
    )
    stale = counts["total"] - counts["embedded"] - counts["missing"]
    return EmbeddingStatus(model_id, counts["embedded"], stale, counts["missing"])


def current_vectors(system: str, *, model_id: str | None = None) -> tuple[list[int], np.ndarray]:
    """(tool ids, unit-row float32 matrix) of the live tools of a system with a current vector."""
    model_id = model_id or configured_model_id()
    rows = list(
        ToolEmbedding.objects.filter(
            model_id=model_id,
            tool__system=system,
            tool__retired_in__isnull=True,
            text_sha256=F("tool__rag_text_sha256"),
        )
        .order_by("tool_id")
        .values_list("tool_id", "vector")
    )
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    matrix = np.vstack([np.frombuffer(bytes(v), dtype="<f4") for _, v in rows])
    return [pk for pk, _ in rows], matrix
