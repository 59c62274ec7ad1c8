"""Keeping every live tool's vector current: embedding the tools that need it, and queueing that after commit.

Writes are upserts on (tool, model): a redelivered task, two racing workers or a sweep after a crash re-embed at
most, and never duplicate a row.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.models import ToolEmbedding
from catalog.rag.domain.text import embedding_text
from catalog.rag.embedders import Embedder, get_embedder
from catalog.rag.selectors.vectors import embeddable_tools, with_vector_hash

log = logging.getLogger(__name__)

# The task that embeds a batch, by its registered name (catalog/rag/tasks.py registers it under this name).
# The service starts it by name from Celery's registry rather than importing the task module: tasks call
# services, never the reverse, so there is no import cycle to hide.
EMBED_TOOLS_TASK = "catalog.rag.tasks.embed_tools"


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
        with_vector_hash(embeddable_tools().filter(pk__in=ids), model_id).values(
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
    chunks = batches(sorted(set(tool_ids)))

    def send() -> None:
        for chunk in chunks:
            try:
                # From the registry (not send_task) so that with no broker the task runs here, eagerly.
                current_app.tasks[EMBED_TOOLS_TASK].delay(chunk)
            except Exception:  # the broker is down: the import stands, and the beat's sweep queues these later
                log.warning("could not queue %d tool(s) for embedding; the sweep will", len(chunk), exc_info=True)
                return

    transaction.on_commit(send)
