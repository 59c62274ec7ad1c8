"""Keeping every live tool's vector current: which tools need one, embedding them, and counting.

A vector is current when it was made by the configured model from the text the tool has now
(`ToolEmbedding.text_sha256 == Tool.rag_text_sha256`). Writes are upserts on (tool, model): a redelivered
task, two racing workers or a sweep after a crash re-embed at most, and never duplicate a row.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from catalog.models import Tool, ToolEmbedding
from catalog.rag.embedders import Embedder, configured_model_id, get_embedder
from catalog.rag.text import embedding_text

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

log = logging.getLogger(__name__)


class VectorHash(TypedDict):
    """The text hash of the tool's stored vector for one model; None when it has none."""

    vector_sha: str | None


def embeddable_tools() -> QuerySet[Tool]:
    """Live tools with text to embed (a tool with no ragDescription and no keywords is never a candidate)."""
    return Tool.objects.live().exclude(rag_text_sha256="")


def _with_vector_hash(tools: QuerySet[Tool], model_id: str) -> QuerySet[WithAnnotations[Tool, VectorHash]]:
    vector = ToolEmbedding.objects.filter(tool=OuterRef("pk"), model_id=model_id).values("text_sha256")[:1]
    return tools.annotate(vector_sha=Subquery(vector))


def tools_needing_vectors(*, model_id: str | None = None, system: str | None = None) -> list[int]:
    """Ids of live tools whose vector for the model is missing or stale, in id order (one query)."""
    tools = embeddable_tools()
    if system:
        tools = tools.filter(system=system)
    annotated = _with_vector_hash(tools, model_id or configured_model_id())
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
    counts = _with_vector_hash(tools, model_id).aggregate(
        embedded=Count("pk", filter=Q(vector_sha=F("rag_text_sha256"))),
        missing=Count("pk", filter=Q(vector_sha__isnull=True)),
        total=Count("pk"),
    )
    stale = counts["total"] - counts["embedded"] - counts["missing"]
    return EmbeddingStatus(model_id, counts["embedded"], stale, counts["missing"])


@dataclass(frozen=True)
class RefreshResult:
    embedded: list[int]
    skipped: int  # already current (a redelivery, or another worker got there first)
    systems: frozenset[str]


def embeddings_refresh(tool_ids: Iterable[int], *, embedder: Embedder | None = None) -> RefreshResult:
    """Embed those of `tool_ids` whose vector is missing or stale, re-reading their current text.

    Idempotent: a tool whose vector already matches its text (and the model) is skipped, so a redelivered
    or duplicated task costs one query and no embedder call.
    """
    embedder = embedder or get_embedder()
    model_id = embedder.model_id
    ids = sorted(set(tool_ids))
    rows = list(
        _with_vector_hash(embeddable_tools().filter(pk__in=ids), model_id).values(
            "pk", "system", "rag_description", "rag_keywords", "rag_text_sha256", "vector_sha"
        )
    )
    todo = [r for r in rows if r["vector_sha"] != r["rag_text_sha256"]]
    if not todo:
        return RefreshResult([], len(rows), frozenset())
    vectors = embedder.embed([embedding_text(r["rag_description"], r["rag_keywords"]) for r in todo])
    now = timezone.now()
    objs = [
        ToolEmbedding(
            tool_id=r["pk"],
            model_id=model_id,
            text_sha256=r["rag_text_sha256"],
            dim=int(vectors.shape[1]),
            vector=np.ascontiguousarray(vector, dtype="<f4").tobytes(),
            embedded_at=now,
        )
        for r, vector in zip(todo, vectors, strict=True)
    ]
    with transaction.atomic():
        ToolEmbedding.objects.bulk_create(
            objs,
            update_conflicts=True,
            unique_fields=["tool", "model_id"],
            update_fields=["text_sha256", "dim", "vector", "embedded_at"],
        )
    return RefreshResult([r["pk"] for r in todo], len(rows) - len(todo), frozenset(r["system"] for r in todo))


def batches(ids: Sequence[int], size: int | None = None) -> list[list[int]]:
    size = size or settings.CONDOR_EMBED_BATCH
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


def embeddings_enqueue(tool_ids: Sequence[int]) -> None:
    """After the current transaction commits, queue the tools for embedding in batches (a few tasks for an
    import of hundreds of changed tools, not one per tool)."""
    if not tool_ids:
        return
    from catalog.rag.tasks import embed_tools

    chunks = batches(sorted(set(tool_ids)))

    def send() -> None:
        for chunk in chunks:
            try:
                embed_tools.delay(chunk)
            except Exception:  # the broker is down: the import stands, and the beat's sweep queues these later
                log.warning("could not queue %d tool(s) for embedding; the sweep will", len(chunk), exc_info=True)
                return

    transaction.on_commit(send)


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
