"""The retrieval index in process: the live catalog with its current vectors, rebuilt when either changes.

Two small queries check that the cached index still holds (the catalog version and the newest vector); a rebuild
reads every live tool and vector once.
"""

from __future__ import annotations

import threading

import numpy as np
from django.db.models import Max

from catalog.core.cache import catalog_version
from catalog.models import CatalogProfile, ForcedFloor, Tool, ToolEmbedding
from catalog.rag.domain.index import CURRENT, IndexedProfile, IndexedTool, RagIndex, SystemIndex, vector_state

_lock = threading.Lock()
_cached: RagIndex | None = None

StoredVectors = dict[int, tuple[str, bytes]]  # tool pk → (text hash the vector came from, little-endian float32)


def _vectors_version(model_id: str) -> tuple[object, ...]:
    """The newest vector of the model (time and id): asked on every resolution, one aggregate over an index."""
    found = ToolEmbedding.objects.filter(model_id=model_id).aggregate(last=Max("embedded_at"), top=Max("pk"))
    return (found["last"], found["top"])


def rag_index(model_id: str) -> RagIndex:
    """The index for the model, rebuilt when the catalog or the model's vectors changed since it was built."""
    global _cached
    version = (catalog_version(), model_id, _vectors_version(model_id))
    index = _cached
    if index is not None and index.version == version:
        return index
    with _lock:
        if _cached is not None and _cached.version == version:
            return _cached
        _cached = _build(version, model_id)
        return _cached


def _build(version: tuple[object, ...], model_id: str) -> RagIndex:
    vectors = _stored_vectors(model_id)
    floors = _floors_by_system()
    revisions = {system: revision for system, revision, _ in catalog_version()}
    systems = {
        system: _system_index(system, tools, vectors, floors.get(system, []), revisions.get(system))
        for system, tools in _live_tools_by_system().items()
    }
    profiles = {
        p.slug: IndexedProfile(p.slug, p.system, list(p.availabilities), list(p.includes))
        for p in CatalogProfile.objects.all()
    }
    return RagIndex(version, model_id, systems, profiles)


def _stored_vectors(model_id: str) -> StoredVectors:
    return {
        tool_id: (sha, bytes(vec))
        for tool_id, sha, vec in ToolEmbedding.objects.filter(model_id=model_id, tool__retired_in__isnull=True)
        .values_list("tool_id", "text_sha256", "vector")
        .iterator(chunk_size=2000)
    }


def _live_tools_by_system() -> dict[str, list[Tool]]:
    grouped: dict[str, list[Tool]] = {}
    for tool in Tool.objects.live().select_related("last_changed_revision").order_by("system", "declared_id"):
        grouped.setdefault(tool.system, []).append(tool)
    return grouped


def _floors_by_system() -> dict[str, list[tuple[str, str, list[str]]]]:
    floors: dict[str, list[tuple[str, str, list[str]]]] = {}
    for floor in ForcedFloor.objects.order_by("system", "slug"):
        floors.setdefault(floor.system, []).append((floor.slug, floor.trigger, list(floor.tool_ids)))
    return floors


def _system_index(
    system: str,
    tools: list[Tool],
    vectors: StoredVectors,
    floors: list[tuple[str, str, list[str]]],
    revision: object,
) -> SystemIndex:
    """One system's tools in declared-id order; only current vectors enter the matrix."""
    indexed: list[IndexedTool] = []
    rows: list[IndexedTool] = []
    arrays: list[np.ndarray] = []
    for t in tools:
        stored = vectors.get(t.pk)
        state = vector_state(t.rag_text_sha256, stored[0] if stored is not None else None)
        item = _indexed_tool(t, row=len(rows) if state == CURRENT else None, state=state)
        indexed.append(item)
        if state == CURRENT and stored is not None:
            rows.append(item)
            arrays.append(np.frombuffer(stored[1], dtype="<f4"))
    return SystemIndex(
        tools=indexed,
        by_key={t.key: t for t in indexed},
        matrix=np.vstack(arrays) if arrays else np.zeros((0, 1), dtype=np.float32),
        rows=rows,
        floors=floors,
        revision=revision,
    )


def _indexed_tool(t: Tool, *, row: int | None, state: str) -> IndexedTool:
    return IndexedTool(
        pk=t.pk,
        system=t.system,
        declared_id=t.declared_id,
        key=t.canonical_key,
        plane=t.plane,
        availability=t.availability,
        always_include=t.always_include,
        rag_description=t.rag_description,
        description=t.description,
        instruction_fragment=t.instruction_fragment,
        input_schema=t.input_schema,
        has_text=bool(t.rag_text_sha256),
        row=row,
        vector_state=state,
    )
