"""The retrieval index in process: the live catalog with its current vectors, rebuilt when either changes.

Two small queries check that the cached index still holds (the catalog version and the newest vector); a rebuild
reads every live tool and vector once.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from django.db.models import Max

from catalog.core.cache import catalog_version
from catalog.models import CatalogProfile, ForcedFloor, Tool, ToolEmbedding
from catalog.rag.domain.index import CURRENT, IndexedProfile, IndexedTool, RagIndex, SystemIndex, vector_state

_lock = threading.Lock()
_cached: RagIndex | None = None

StoredVectors = dict[int, dict[str, bytes]]  # tool pk → {text hash the vector came from: little-endian float32}


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
    revisions = {row[0]: row[1] for row in catalog_version()}
    systems: dict[str, SystemIndex] = {}
    in_effect: dict[str, SystemIndex] = {}
    for system, tools in _live_tools_by_system().items():
        args = (vectors, floors.get(system, []), revisions.get(system))
        systems[system] = _system_index([(t, t.declared(), t.rag_text_sha256) for t in tools], *args)
        # Clinical profiles retrieve over what is in effect; the same index when nothing awaits sign-off.
        awaiting = any(t.awaiting_signoff for t in tools)
        in_effect[system] = (
            _system_index([(t, t.in_effect, t.in_effect_text_sha256) for t in tools if t.in_effect], *args)
            if awaiting
            else systems[system]
        )
    profiles = {
        p.slug: IndexedProfile(p.slug, p.system, list(p.availabilities), list(p.includes), p.clinical)
        for p in CatalogProfile.objects.all()
    }
    return RagIndex(version, model_id, systems, profiles, in_effect)


def _stored_vectors(model_id: str) -> StoredVectors:
    stored: StoredVectors = {}
    rows = (
        ToolEmbedding.objects.filter(model_id=model_id, tool__retired_in__isnull=True)
        .values_list("tool_id", "text_sha256", "vector")
        .iterator(chunk_size=2000)
    )
    for tool_id, sha, vec in rows:
        stored.setdefault(tool_id, {})[sha] = bytes(vec)
    return stored


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
    tools: list[tuple[Tool, dict[str, Any], str]],
    vectors: StoredVectors,
    floors: list[tuple[str, str, list[str]]],
    revision: object,
) -> SystemIndex:
    """One system's tools in declared-id order, each as (row, the declaration served, the hash of its embedded
    text); only vectors of that text enter the matrix."""
    indexed: list[IndexedTool] = []
    rows: list[IndexedTool] = []
    arrays: list[np.ndarray] = []
    for t, declared, text_sha in tools:
        stored = vectors.get(t.pk, {})
        found = text_sha if text_sha in stored else next(iter(stored), None)
        state = vector_state(text_sha, found)
        item = _indexed_tool(t, declared, text_sha, row=len(rows) if state == CURRENT else None, state=state)
        indexed.append(item)
        if state == CURRENT:
            rows.append(item)
            arrays.append(np.frombuffer(stored[text_sha], dtype="<f4"))
    return SystemIndex(
        tools=indexed,
        by_key={t.key: t for t in indexed},
        matrix=np.vstack(arrays) if arrays else np.zeros((0, 1), dtype=np.float32),
        rows=rows,
        floors=floors,
        revision=revision,
    )


def _indexed_tool(t: Tool, declared: dict[str, Any], text_sha: str, *, row: int | None, state: str) -> IndexedTool:
    return IndexedTool(
        pk=t.pk,
        system=t.system,
        declared_id=t.declared_id,
        key=t.canonical_key,
        plane=declared["plane"],
        availability=declared["availability"],
        always_include=declared["always_include"],
        rag_description=declared["rag_description"],
        description=declared["description"],
        instruction_fragment=declared["instruction_fragment"],
        input_schema=declared["input_schema"],
        has_text=bool(text_sha),
        row=row,
        vector_state=state,
    )
