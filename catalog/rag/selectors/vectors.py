"""Which tools need a vector, how many are current, and the current vectors themselves.

A vector is current when it was made by the configured model from the text the tool has now
(`ToolEmbedding.text_sha256 == Tool.rag_text_sha256`), with its phrases cut by today's `PHRASE_SCHEME`. While a
rewrite of a tool's text awaits sign-off, the vector of the text in effect (`Tool.in_effect_text_sha256`) is kept
and needed too: clinical profiles retrieve by it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet

from catalog.core.cache import catalog_version
from catalog.models import Tool, ToolEmbedding
from catalog.rag.domain.phrases import PHRASE_SCHEME
from catalog.rag.embedders import configured_model_id


def embeddable_tools() -> QuerySet[Tool]:
    """Live tools with text to embed (a tool with no ragDescription and no keywords is never a candidate)."""
    return Tool.objects.live().exclude(rag_text_sha256="")


def _vector(model_id: str, text_sha: str | None = None) -> Exists:
    """Whether the tool has a vector for the model (of the text whose hash is in column `text_sha`, with phrases of
    the current scheme, when given)."""
    vectors = ToolEmbedding.objects.filter(tool=OuterRef("pk"), model_id=model_id)
    if text_sha:
        return Exists(vectors.filter(text_sha256=OuterRef(text_sha), phrase_scheme=PHRASE_SCHEME))
    return Exists(vectors)


def lacking_vectors(tools: QuerySet[Tool], model_id: str) -> QuerySet[Tool]:
    """Those of `tools` that lack the vector of their newest text, or of the text in effect when that differs."""
    in_effect_needed = ~Q(in_effect_text_sha256="") & ~Q(in_effect_text_sha256=F("rag_text_sha256"))
    return tools.annotate(
        has_current=_vector(model_id, "rag_text_sha256"), has_in_effect=_vector(model_id, "in_effect_text_sha256")
    ).filter(Q(has_current=False) | (in_effect_needed & Q(has_in_effect=False)))


def tools_needing_vectors(*, model_id: str | None = None, system: str | None = None) -> list[int]:
    """Ids of live tools whose vector for the model is missing or stale, in id order (one query)."""
    tools = embeddable_tools()
    if system:
        tools = tools.filter(system=system)
    return list(lacking_vectors(tools, model_id or configured_model_id()).order_by("pk").values_list("pk", flat=True))


# Tool ids after a batch's last that `vectors_pending` reads first. Few enough that PostgreSQL plans the read as
# one index lookup per tool (stopping at the first that waits); over the whole system it hashes every vector
# row of the model instead (a sequential read of the vector table: 64 ms a batch at 50,000 tools).
PENDING_WINDOW = 512


def vectors_pending(system: str, *, model_id: str | None = None, after: int | None = None) -> bool:
    """Whether any live tool of `system` still waits for a vector.

    Asked after every batch, with `after` the batch's highest tool id: batches are queued in id order, so while a
    change is embedded the tools of the next batch wait right after it, and one read of the ids just after
    `after` answers (one query, a millisecond). Otherwise (the batch that leaves nothing pending, a change whose
    next tools are further on, no `after`) one read of the whole system answers (a second query)."""
    lacking = lacking_vectors(embeddable_tools().filter(system=system), model_id or configured_model_id())
    if after is not None and lacking.filter(pk__gt=after, pk__lte=after + PENDING_WINDOW).exists():
        return True
    return lacking.exists()


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
    """Embedded / stale / missing counts of live tools for the configured model.

    Kept until the catalog or the model's vectors change: two small queries while they do not (the catalog's
    version; the model's newest vector, two index lookups), the counting pass once after a change. The pass
    compares every live tool with its vectors (120-150 ms at 50,000 tools) and the dashboard shows it on every
    view. What it compares is written by imports (a new catalog version) and by the vector service, whose every
    write stamps `embedded_at` (a new or re-made vector) and which deletes a vector only in the transaction that
    writes its replacement. (A count of the vectors in the key would also catch a bare delete, at 12-17 ms a view
    at 45,000 vectors: nothing in the product deletes that way.)"""
    model_id = configured_model_id()
    key = (catalog_version(), vectors_version(model_id))
    kept = _kept_status.get((model_id, system))
    if kept is not None and kept[0] == key:
        return kept[1]
    status = _counted_status(model_id, system)
    _kept_status[(model_id, system)] = (key, status)
    return status


def vectors_version(model_id: str) -> tuple[object, ...]:
    """The model's newest vector (time and id): moves whenever a vector is written or re-made. One aggregate that
    PostgreSQL answers from two indexes' ends (tool_embedding_time_idx, tool_embedding_newest_idx). Every
    resolution asks it (the retrieval index's freshness), and the dashboard's embedding status."""
    found = ToolEmbedding.objects.filter(model_id=model_id).aggregate(last=Max("embedded_at"), top=Max("pk"))
    return (found["last"], found["top"])


_kept_status: dict[tuple[str, str | None], tuple[tuple[object, ...], EmbeddingStatus]] = {}


def embedding_status_forget() -> None:
    """Drop the kept counts (tests that roll the database back reuse the versions they were kept under)."""
    _kept_status.clear()


def _counted_status(model_id: str, system: str | None) -> EmbeddingStatus:
    """The counts themselves: one query over the live tools and their vectors."""
    tools = embeddable_tools()
    if system:
        tools = tools.filter(system=system)
    counts = tools.annotate(current=_vector(model_id, "rag_text_sha256"), any=_vector(model_id)).aggregate(
        embedded=Count("pk", filter=Q(current=True)),
        missing=Count("pk", filter=Q(any=False)),
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
