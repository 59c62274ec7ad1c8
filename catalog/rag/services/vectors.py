"""Keeping every live tool's vector current: embedding the tools that need it, and queueing that after commit.

Writes are upserts on (tool, model): a redelivered task, two racing workers or a sweep after a crash re-embed at
most, and never duplicate a row.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.models import Tool, ToolEmbedding
from catalog.rag.domain.phrases import PHRASE_SCHEME, Phrases, tool_phrases
from catalog.rag.domain.text import embedding_text
from catalog.rag.embedders import Embedder, get_embedder
from catalog.rag.selectors.vectors import embeddable_tools, lacking_vectors

log = logging.getLogger(__name__)

# The task that embeds a batch, by its registered name (catalog/rag/tasks.py registers it under this name).
# The service starts it by name from Celery's registry rather than importing the task module: tasks call
# services, never the reverse, so there is no import cycle to hide.
EMBED_TOOLS_TASK = "catalog.rag.tasks.embed_tools"


@dataclass(frozen=True)
class RefreshResult:
    embedded: list[int]
    skipped: int  # already current (a redelivery, or another worker got there first)
    # The systems of the batch's tools, embedded now or before: a redelivery of a batch whose worker died after
    # embedding still completes its system (and so refreshes its sibling findings).
    systems: frozenset[str]


def embeddings_refresh(
    tool_ids: Iterable[int], *, embedder: Embedder | None = None, force: bool = False
) -> RefreshResult:
    """Embed the texts of `tool_ids` that have no vector yet (re-reading their newest text and the text in effect),
    each with its phrases, then delete the vectors of texts that are neither.

    Idempotent: a tool whose vectors already match its texts (and the model) is skipped, so a redelivered or
    duplicated task costs two queries and no embedder call. `force` (`reembed --all`): embed every text again and
    replace its vector in place, so that resolution keeps the old vector until the new one is stored.
    """
    embedder = embedder or get_embedder()
    model_id = embedder.model_id
    ids = sorted(set(tool_ids))
    tools = embeddable_tools().filter(pk__in=ids)
    rows = list(
        (tools if force else lacking_vectors(tools, model_id)).values(
            "pk", "system", "rag_description", "rag_keywords", "rag_text_sha256", "in_effect", "in_effect_text_sha256"
        )
    )
    todo = _texts_to_embed(rows, model_id, force=force)
    if not todo:
        systems = frozenset(Tool.objects.filter(pk__in=ids).values_list("system", flat=True).distinct())
        return RefreshResult([], len(ids), systems)
    # One embedder call for the texts and all their phrases: each text's vector, then its phrases' vectors.
    flat = [piece for _, _, text, phrases in todo for piece in (text, *phrases.all)]
    vectors = embedder.embed(flat)
    now = timezone.now()
    objs = []
    at = 0
    for pk, sha, _, phrases in todo:
        count = len(phrases.all)
        objs.append(
            ToolEmbedding(
                tool_id=pk,
                model_id=model_id,
                text_sha256=sha,
                dim=int(vectors.shape[1]),
                vector=np.ascontiguousarray(vectors[at], dtype="<f4").tobytes(),
                phrases=np.ascontiguousarray(vectors[at + 1 : at + 1 + count], dtype="<f4").tobytes(),
                phrase_scheme=PHRASE_SCHEME,
                embedded_at=now,
            )
        )
        at += 1 + count
    embedded = sorted({pk for pk, _, _, _ in todo})
    with transaction.atomic():
        ToolEmbedding.objects.bulk_create(
            objs,
            update_conflicts=True,
            unique_fields=["tool", "model_id", "text_sha256"],
            # A re-made vector is unchecked again: the sibling refresh after the change scores it.
            update_fields=["dim", "vector", "phrases", "phrase_scheme", "embedded_at", "siblings_checked"],
        )
        _delete_unneeded_vectors(embedded, model_id)
    return RefreshResult(embedded, len(ids) - len(embedded), frozenset(r["system"] for r in rows))


def _delete_unneeded_vectors(tool_ids: Sequence[int], model_id: str) -> None:
    """Delete the vectors of `tool_ids` whose text is neither the tool's newest nor the one in effect.

    The vectors are listed first and the tools' texts read after: a vector another worker makes meanwhile for a
    text an import just changed is not in the list, so it is never taken for stale; a listed vector is deleted
    only when its text is no text of the tool as read after it. (The one gap: an import that reverts a tool to
    an older text in between; the sweep re-embeds that text.)

    Two indexed reads and a delete by id, not one DELETE joining the tables: PostgreSQL planned that join as
    nested loops over every vector and tool row while the tables had no statistics yet (every fresh database, so
    every test run), and one call at 431 tools ran for minutes."""
    stored = list(
        ToolEmbedding.objects.filter(tool_id__in=tool_ids, model_id=model_id).values_list(
            "pk", "tool_id", "text_sha256"
        )
    )
    texts = {
        pk: {current, in_effect}
        for pk, current, in_effect in Tool.objects.filter(pk__in=tool_ids).values_list(
            "pk", "rag_text_sha256", "in_effect_text_sha256"
        )
    }
    unneeded = [pk for pk, tool_id, sha in stored if sha not in texts.get(tool_id, ())]
    if unneeded:
        ToolEmbedding.objects.filter(pk__in=unneeded).delete()


def _texts_to_embed(
    rows: Sequence[Mapping[str, Any]], model_id: str, *, force: bool = False
) -> list[tuple[int, str, str, Phrases]]:
    """(tool id, text hash, text, its phrases) of each text of `rows` with no vector of this phrase scheme for
    the model yet (every text of `rows`, when forced)."""
    stored: set[tuple[int, str]] = set()
    if not force:
        stored = set(
            ToolEmbedding.objects.filter(
                tool_id__in=[r["pk"] for r in rows], model_id=model_id, phrase_scheme=PHRASE_SCHEME
            ).values_list("tool_id", "text_sha256")
        )
    todo: list[tuple[int, str, str, Phrases]] = []
    for r in rows:
        sources = {r["rag_text_sha256"]: (r["rag_description"], r["rag_keywords"])}
        in_effect = r["in_effect"]
        if in_effect and r["in_effect_text_sha256"] and r["in_effect_text_sha256"] not in sources:
            sources[r["in_effect_text_sha256"]] = (in_effect["rag_description"], in_effect["rag_keywords"])
        todo.extend(
            (r["pk"], sha, embedding_text(description, keywords), tool_phrases(description, keywords))
            for sha, (description, keywords) in sources.items()
            if (r["pk"], sha) not in stored
        )
    return todo


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
        for n, chunk in enumerate(chunks, 1):
            # With no broker each batch runs right here, so these lines are the embedding's progress.
            log.info("embedding batch %d of %d (%d tool(s))", n, len(chunks), len(chunk))
            try:
                # From the registry (not send_task) so that with no broker the task runs here, eagerly.
                current_app.tasks[EMBED_TOOLS_TASK].delay(chunk)
            except Exception as exc:  # the broker is down: the import stands, and the beat's sweep queues these later
                # An expected outage, said in one line (no traceback: nothing here is a bug to chase).
                log.warning("could not queue %d tool(s) for embedding (%s); the sweep will", len(chunk), exc)
                return

    transaction.on_commit(send)
