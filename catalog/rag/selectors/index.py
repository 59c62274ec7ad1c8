"""The retrieval index in process: the live catalog with its current vectors, rebuilt when either changes.

Two small queries check that the cached index still holds (the catalog version and the newest vector). A rebuild
reads every live tool and the list of vectors, but fetches and prepares only what changed since the last build:
each tool text's vectors (whole text and phrases) and its lexical row are kept per (tool, text, time embedded), so
when one tool changes, one tool's pieces are read and computed again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Max
from scipy import sparse

from catalog.core.cache import catalog_version
from catalog.models import CatalogProfile, ForcedFloor, Tool, ToolEmbedding
from catalog.rag.domain.hybrid import phrase_matrix
from catalog.rag.domain.index import CURRENT, IndexedProfile, IndexedTool, RagIndex, SystemIndex, vector_state
from catalog.rag.domain.lexical import lexical_index, term_counts
from catalog.rag.domain.phrases import PHRASE_SCHEME, lexical_text, tool_phrases

_lock = threading.Lock()
_cached: RagIndex | None = None


@dataclass(frozen=True)
class Piece:
    """One stored vector row, ready for the matrices: the whole-text vector and the phrase vectors."""

    embedded_at: object
    whole: np.ndarray
    phrases: np.ndarray  # (n, dim): positives then negatives; (0, dim) when made before phrases
    phrase_scheme: int  # how its phrases were cut: only PHRASE_SCHEME's line up with today's tool_phrases


StoredVectors = dict[int, dict[str, Piece]]  # tool pk → {text hash the vector came from: its piece}
# Kept across builds: (tool pk, text hash) → piece, and (text hash, declared id) → lexical count row.
_pieces: dict[tuple[int, str], Piece] = {}
_lexical_rows: dict[tuple[str, str], sparse.csr_matrix] = {}
_lexical_used: set[tuple[str, str]] = set()  # the rows the build in progress used: the others are dropped after it
# (tool pk, text hash) → (positive, negative) phrase vectors of that piece, cut once per piece.
_splits: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}


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
    # Only vectors changed (the worker stored some; the catalog, and so every tool's eligibility, did not): while
    # another thread rebuilds, serve the index it replaces rather than wait seconds at 50,000 tools. Its vectors
    # were current a moment ago, and a tool whose newest vector it lacks is simply not retrieved yet. A catalog
    # change always waits for the rebuild: nothing is ever served from a catalog that is no longer live.
    vectors_only = index is not None and index.version[:2] == version[:2]
    if not _lock.acquire(blocking=not vectors_only):
        assert index is not None
        return index
    try:
        if _cached is not None and _cached.version == version:
            return _cached
        _cached = _build(version, model_id)
        return _cached
    finally:
        _lock.release()


@dataclass(frozen=True)
class CatalogPart:
    """What the index takes from the catalog (not from the vectors): read again only when the catalog version
    changes, so a vector the worker stores costs a rebuild of the matrices, not a read of every tool."""

    version: object
    # system → [(tool, the declaration served, the hash of its embedded text)], newest import and in effect
    newest: dict[str, list[tuple[Tool, dict[str, Any], str]]]
    in_effect: dict[str, list[tuple[Tool, dict[str, Any], str]] | None]  # None: the same as the newest
    floors: dict[str, list[tuple[str, str, list[str]]]]
    revisions: dict[str, object]
    profiles: dict[str, IndexedProfile]


_catalog_part: CatalogPart | None = None


def _read_catalog(version: object) -> CatalogPart:
    newest: dict[str, list[tuple[Tool, dict[str, Any], str]]] = {}
    in_effect: dict[str, list[tuple[Tool, dict[str, Any], str]] | None] = {}
    for system, tools in _live_tools_by_system().items():
        newest[system] = [(t, t.declared(), t.rag_text_sha256) for t in tools]
        # Clinical profiles retrieve over what is in effect; the same index when nothing awaits sign-off.
        awaiting = any(t.awaiting_signoff for t in tools)
        in_effect[system] = (
            [(t, t.in_effect, t.in_effect_text_sha256) for t in tools if t.in_effect] if awaiting else None
        )
    profiles = {
        p.slug: IndexedProfile(p.slug, p.system, list(p.availabilities), list(p.includes), p.clinical)
        for p in CatalogProfile.objects.all()
    }
    revisions = {str(row[0]): row[1] for row in catalog_version()}
    return CatalogPart(version, newest, in_effect, _floors_by_system(), revisions, profiles)


def _build(version: tuple[object, ...], model_id: str) -> RagIndex:
    global _catalog_part
    if _catalog_part is None or _catalog_part.version != version[0]:
        _catalog_part = _read_catalog(version[0])
    part = _catalog_part
    vectors = _stored_vectors(model_id)
    systems: dict[str, SystemIndex] = {}
    in_effect: dict[str, SystemIndex] = {}
    for system, newest in part.newest.items():
        args = (vectors, part.floors.get(system, []), part.revisions.get(system))
        systems[system] = _system_index(newest, *args)
        awaiting = part.in_effect[system]
        in_effect[system] = systems[system] if awaiting is None else _system_index(awaiting, *args)
    for unused in set(_lexical_rows) - _lexical_used:
        del _lexical_rows[unused]
    _lexical_used.clear()
    return RagIndex(version, model_id, systems, part.profiles, in_effect)


def _stored_vectors(model_id: str) -> StoredVectors:
    """Every live tool's vectors for the model; blobs are fetched only for rows not already kept from an earlier
    build (a row re-embedded since carries a newer time)."""
    listing = list(
        ToolEmbedding.objects.filter(model_id=model_id, tool__retired_in__isnull=True).values_list(
            "pk", "tool_id", "text_sha256", "embedded_at"
        )
    )
    fresh = [pk for pk, tool_id, sha, at in listing if getattr(_pieces.get((tool_id, sha)), "embedded_at", None) != at]
    for start in range(0, len(fresh), 2000):
        rows = ToolEmbedding.objects.filter(pk__in=fresh[start : start + 2000]).values_list(
            "tool_id", "text_sha256", "embedded_at", "dim", "vector", "phrases", "phrase_scheme"
        )
        for tool_id, sha, at, dim, vector, phrases, scheme in rows:
            whole = np.frombuffer(bytes(vector), dtype="<f4")
            cut = np.frombuffer(bytes(phrases), dtype="<f4").reshape(-1, dim)
            _pieces[(tool_id, sha)] = Piece(at, whole, cut, scheme)
            _splits.pop((tool_id, sha), None)
    wanted = {(tool_id, sha) for _, tool_id, sha, _ in listing}
    for gone in set(_pieces) - wanted:
        del _pieces[gone]
        _splits.pop(gone, None)
    stored: StoredVectors = {}
    for _, tool_id, sha, _ in listing:
        stored.setdefault(tool_id, {})[sha] = _pieces[(tool_id, sha)]
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
    text); only vectors of that text enter the matrices."""
    indexed: list[IndexedTool] = []
    rows: list[IndexedTool] = []
    wholes: list[np.ndarray] = []
    phrase_rows: list[tuple[np.ndarray, np.ndarray]] = []
    lexical_rows: list[sparse.csr_matrix] = []
    for t, declared, text_sha in tools:
        stored = vectors.get(t.pk, {})
        found = text_sha if text_sha in stored else next(iter(stored), None)
        state = vector_state(text_sha, found)
        item = _indexed_tool(t, declared, text_sha, row=len(rows) if state == CURRENT else None, state=state)
        indexed.append(item)
        if state == CURRENT:
            piece = stored[text_sha]
            rows.append(item)
            wholes.append(piece.whole)
            split = _splits.get((t.pk, text_sha))
            if split is None:
                split = _splits[(t.pk, text_sha)] = _split_phrases(piece, declared)
            phrase_rows.append(split)
            lexical_rows.append(_lexical_row(text_sha, t.declared_id, declared))
    dim = wholes[0].shape[0] if wholes else 1
    return SystemIndex(
        tools=indexed,
        by_key={t.key: t for t in indexed},
        matrix=np.vstack(wholes) if wholes else np.zeros((0, 1), dtype=np.float32),
        rows=rows,
        floors=floors,
        revision=revision,
        phrase_vectors=phrase_matrix(phrase_rows, dim),
        lexical_rows=lexical_index(lexical_rows),
    )


def _split_phrases(piece: Piece, declared: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(positive, negative) phrase vectors; none when the row holds another count than the text has phrases (a
    row made before phrases, or by another scheme: the sweep re-embeds it)."""
    phrases = tool_phrases(declared["rag_description"], declared["rag_keywords"])
    if piece.phrase_scheme != PHRASE_SCHEME or piece.phrases.shape[0] != len(phrases.all):
        empty = np.zeros((0, piece.whole.shape[0]), dtype=np.float32)
        return empty, empty
    cut = len(phrases.positive)
    return piece.phrases[:cut], piece.phrases[cut:]


def _lexical_row(text_sha: str, declared_id: str, declared: dict[str, Any]) -> sparse.csr_matrix:
    _lexical_used.add((text_sha, declared_id))
    row = _lexical_rows.get((text_sha, declared_id))
    if row is None:
        text = lexical_text(declared["rag_description"], declared["rag_keywords"], declared_id)
        row = _lexical_rows[(text_sha, declared_id)] = term_counts([text])
    return row


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
