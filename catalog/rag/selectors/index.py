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
from django.conf import settings
from django.db import connections
from django.db.models import Max
from scipy import sparse

from catalog.core.cache import catalog_version
from catalog.models import Tool, ToolEmbedding
from catalog.rag.domain.hybrid import phrase_matrix
from catalog.rag.domain.index import CURRENT, STALE, IndexedTool, RagIndex, SystemIndex, patched, vector_state
from catalog.rag.domain.lexical import lexical_index, term_counts
from catalog.rag.domain.phrases import PHRASE_SCHEME, lexical_text, tool_phrases
from catalog.rag.selectors.index_catalog import CatalogPart, read_catalog

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


def rag_index(model_id: str, *, background: bool | None = None) -> RagIndex:
    """The index for the model, rebuilt when the catalog or the model's vectors changed since it was built.

    `background` (default: the setting CONDOR_RAG_INDEX_BACKGROUND, off unless set): after a change, answer at
    once and build the exact index in a thread. Only vectors changed: the index it replaces is served (its vectors
    were current a moment ago; a tool whose newest vector it lacks is simply not retrieved yet). The catalog
    changed: the index is first patched to the new catalog (`patched`: the changed tools re-read, each keeps its
    row only while its text is the one embedded) and that is served, never a declaration no longer live or in
    effect. Without `background` a catalog change waits for the rebuild, a vector change unless another thread
    rebuilds."""
    global _cached
    version = (catalog_version(), model_id, _vectors_version(model_id))
    index = _cached
    if index is not None and index.version == version and index.exact:
        return index
    later = bool(getattr(settings, "CONDOR_RAG_INDEX_BACKGROUND", False)) if background is None else background
    same_catalog = index is not None and index.version[:2] == version[:2]
    if same_catalog and later:
        start_refresh(model_id)
        assert index is not None
        return index
    if not _lock.acquire(blocking=not same_catalog):
        assert index is not None
        return index
    try:
        current = _cached
        if current is not None and current.version == version and (current.exact or later):
            return current
        if later and current is not None and current.version[:2] != version[:2]:
            _cached = _patched(version, model_id, current)
            start_refresh(model_id)
        else:
            _cached = _build(version, model_id)
        return _cached
    finally:
        _lock.release()


_refreshing = threading.Event()


def _start_thread(model_id: str) -> None:
    if _refreshing.is_set():
        return
    _refreshing.set()
    threading.Thread(target=refresh, args=(model_id,), name="rag-index-refresh", daemon=True).start()


start_refresh = _start_thread  # tests put their own in its place (a thread cannot see a test's transaction)


def refresh(model_id: str, *, close: bool = True) -> None:
    """Build the exact index until it is current (another change may land while it builds)."""
    global _cached
    try:
        while True:
            with _lock:
                version = (catalog_version(), model_id, _vectors_version(model_id))
                if _cached is not None and _cached.version == version and _cached.exact:
                    return
                _cached = _build(version, model_id)
    finally:
        _refreshing.clear()
        if close:
            connections.close_all()


_catalog_part: CatalogPart | None = None


def _catalog(version: object) -> CatalogPart:
    """The catalog part at `version`: the previous one with the changed tools read again."""
    global _catalog_part
    if _catalog_part is None or _catalog_part.version != version:
        _catalog_part = read_catalog(version, _catalog_part)
    return _catalog_part


def _patched(version: tuple[object, ...], model_id: str, old: RagIndex) -> RagIndex:
    part = _catalog(version[0])
    systems: dict[str, SystemIndex] = {}
    in_effect: dict[str, SystemIndex] = {}
    for system, newest in part.newest.items():
        floors, revision, changed = part.floors.get(system, []), part.revisions.get(system), part.changed[system]
        base = old.systems.get(system)
        systems[system] = _patched_system(base, newest, changed, floors, revision)
        awaiting = part.in_effect[system]
        if awaiting is None:
            in_effect[system] = systems[system]
        else:
            base = old.in_effect.get(system, base)
            in_effect[system] = _patched_system(base, awaiting, changed, floors, revision)
    return RagIndex(version, model_id, systems, part.profiles, in_effect, exact=False)


def _patched_system(
    base: SystemIndex | None,
    tools: list[tuple[Tool, dict[str, Any], str]],
    changed: set[int],
    floors: list[tuple[str, str, list[str]]],
    revision: object,
) -> SystemIndex:
    """`tools` over `base`'s matrices: an unchanged tool as it was; a changed one with its row while its text is
    the one embedded, else none (stale until the exact index, as after a fresh build before the worker ran)."""
    if base is None:
        base = SystemIndex([], {}, np.zeros((0, 1), dtype=np.float32), [], floors, revision)
    before = {t.pk: t for t in base.tools}
    indexed: list[IndexedTool] = []
    for t, declared, text_sha in tools:
        old = before.get(t.pk)
        if old is not None and t.pk not in changed:
            indexed.append(old)
        elif old is not None and old.row is not None and old.text_sha256 == text_sha:
            indexed.append(_indexed_tool(t, declared, text_sha, row=old.row, state=CURRENT))
        else:
            had = old is not None and old.vector_state in (CURRENT, STALE)
            state = vector_state(text_sha, old.text_sha256 if had and old is not None else None)
            indexed.append(_indexed_tool(t, declared, text_sha, row=None, state=STALE if state == CURRENT else state))
    return patched(base, indexed, floors, revision)


def _build(version: tuple[object, ...], model_id: str) -> RagIndex:
    part = _catalog(version[0])
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
        text_sha256=text_sha,
    )
