"""The retrieval index in process: the live catalog with its current vectors, updated in place when either changes.

Two small queries check that the cached index still holds (the catalog version and the newest vector). After a
change the index reads only what changed: the tools the new revisions touched (`index_catalog`), the vector rows
made since the last read (a listing of their ids and times, and the blobs of the new ones), and appends a slot
per new text to the system's slot table (`catalog.rag.domain.slots`); the tools that did not change keep their
slots and their per-declaration values. A count of the vector rows checks the listing: any doubt lists them all
again (the blobs still only of rows not held). Fail closed: the catalog part is always the current catalog.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connections
from django.db.models import Q
from django.utils import timezone

from catalog.core.cache import catalog_version
from catalog.models import Tool, ToolEmbedding
from catalog.rag.domain.index import (
    CURRENT,
    STALE,
    IndexedTool,
    RagIndex,
    SystemIndex,
    patched_view,
    system_view,
    vector_state,
)
from catalog.rag.domain.phrases import PHRASE_SCHEME, lexical_text, tool_phrases
from catalog.rag.domain.slots import Piece, SlotKey, SlotTable, appended, compacted, empty_table, needs_compaction
from catalog.rag.selectors.index_catalog import CatalogPart, Entry, read_catalog
from catalog.rag.selectors.vectors import vectors_version

log = logging.getLogger(__name__)

_lock = threading.Lock()
_cached: RagIndex | None = None
_catalog_part: CatalogPart | None = None
# What the newest index was made from, kept for the next update (read and written under `_lock` only).
_tables: dict[str, SlotTable] = {}  # system → its slot table (shared by its newest and in-effect indexes)
Listing = dict[int, dict[str, tuple[int, object]]]  # tool pk → {text hash: (vector row id, embedded_at)}
_listing: Listing = {}
_listed: tuple[Any, int, int] | None = None  # (when it was read, top row id, rows) the listing reflects
# A worker stamps `embedded_at` before its transaction commits: the next listing looks back this far from when the
# last one was read, so a row committed after that read is still seen (a worker's transaction, and the clocks'
# difference between the worker's host and this one, stay well under it).
LOOK_BACK = timedelta(minutes=2)


def forget() -> None:
    """Drop the index and everything kept for its next update (the next resolution builds from nothing)."""
    global _cached, _catalog_part, _listed
    with _lock:
        _cached, _catalog_part, _listed = None, None, None
        _tables.clear()
        _listing.clear()


def rag_index(model_id: str, *, background: bool | None = None) -> RagIndex:
    """The index for the model, updated when the catalog or the model's vectors changed since it was made.

    `background` (default: the setting CONDOR_RAG_INDEX_BACKGROUND, off unless set): after a change, answer at
    once and read the new vectors in a thread. Only vectors changed: the index it replaces is served (its vectors
    were current a moment ago; a tool whose newest vector it lacks is simply not retrieved yet). The catalog
    changed: the index is first updated to the new catalog without reading vectors (a changed tool keeps a slot
    only while its text is one the table holds) and that is served, never a declaration no longer live or in
    effect. Without `background` a catalog change waits for the update, a vector change unless another thread
    updates."""
    global _cached
    watch_from_here(model_id)
    version = (catalog_version(), model_id, vectors_version(model_id))
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
            _cached = _update(version, model_id, current, read_vectors=False)
            start_refresh(model_id)
        else:
            _cached = _update(version, model_id, current)
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
    """Update the index until it is exact and current (another change may land while it updates)."""
    global _cached
    try:
        while True:
            with _lock:
                version = (catalog_version(), model_id, vectors_version(model_id))
                if _cached is not None and _cached.version == version and _cached.exact:
                    return
                _cached = _update(version, model_id, _cached)
    finally:
        _refreshing.clear()
        if close:
            connections.close_all()


# The watcher: one daemon thread per process that keeps the index current between requests (`watch`).
_watcher: tuple[int, threading.Thread] | None = None  # (the process it runs in, the thread)
_watcher_lock = threading.Lock()
_stop_watching = threading.Event()


def watch_from_here(model_id: str) -> None:
    """Start this process's watcher unless it runs (or CONDOR_RAG_INDEX_WATCH_SECONDS is 0): the first resolution
    starts it, so a process that never resolves (a worker, a command) never polls; a forked child starts its own."""
    global _watcher
    every = float(settings.CONDOR_RAG_INDEX_WATCH_SECONDS)
    if every <= 0 or _watching():
        return
    with _watcher_lock:
        if _watching():
            return
        _stop_watching.clear()
        thread = threading.Thread(target=watch, args=(model_id, every), name="rag-index-watch", daemon=True)
        _watcher = (os.getpid(), thread)
        thread.start()


def _watching() -> bool:
    """Whether this process's watcher runs (a forked child inherits its parent's record, not its thread)."""
    return _watcher is not None and _watcher[0] == os.getpid() and _watcher[1].is_alive()


def stop_watching(timeout: float = 5.0) -> None:
    """End this process's watcher (tests; a process's exit ends the daemon thread anyway)."""
    global _watcher
    with _watcher_lock:
        found, _watcher = _watcher, None
    if found is not None and found[0] == os.getpid():
        _stop_watching.set()
        found[1].join(timeout)


def watch(model_id: str, every: float) -> None:
    """Every `every` seconds, the two freshness queries a resolution asks; when the catalog or the vectors moved,
    the update the next resolution would otherwise pay, made now (issue 24: the first resolve after an import
    answers like the others). Under the resolutions' lock: one arriving meanwhile waits for the update, and is
    never served a catalog that is no longer live (fail closed). A failed round (the database away) is logged and
    the next one tries again on a new connection (logged once per outage, not once a round)."""
    failing = False
    try:
        while not _stop_watching.wait(every):
            try:
                keep_current(model_id)
            except Exception:
                if not failing:
                    log.exception("rag index watcher: the update failed; trying again every %s s", every)
                failing = True
                connections.close_all()  # this thread's connections only: the next round opens a new one
            else:
                if failing:
                    log.warning("rag index watcher: the index is current again")
                failing = False
    finally:
        connections.close_all()


def keep_current(model_id: str) -> bool:
    """Update the index in hand when its catalog or vectors moved; whether it did. Nothing is built for a model
    no resolution asked for (the index in hand is another model's, or none yet)."""
    global _cached
    with _lock:
        index = _cached
        if index is None or index.model_id != model_id:
            return False
        version = (catalog_version(), model_id, vectors_version(model_id))
        if index.version == version and index.exact:
            return False
        started = time.perf_counter()
        _cached = made = _update(version, model_id, index)
        for now, then in ((made.systems, index.systems), (made.in_effect, index.in_effect)):
            for system, view in now.items():
                before = then.get(system)
                if before is not None and before is not view:
                    view.ready_like(before, made.profiles)
        log.debug("rag index watcher: updated in %.0f ms", (time.perf_counter() - started) * 1000)
        return True


def _catalog(version: object) -> CatalogPart:
    """The catalog part at `version`: the previous one with the changed tools read again."""
    global _catalog_part
    if _catalog_part is None or _catalog_part.version != version:
        _catalog_part = read_catalog(version, _catalog_part)
    return _catalog_part


def _update(version: tuple[object, ...], model_id: str, old: RagIndex | None, *, read_vectors: bool = True) -> RagIndex:
    """The index at `version` from `old` (None, or another model's: from nothing). `read_vectors` false: the
    catalog only, over the vectors already held (the background mode's answer at once)."""
    if old is not None and old.model_id != model_id:
        old = None
    if old is None:
        _tables.clear()
        _listing.clear()
    part = _catalog(version[0])
    fresh_vectors = _read_listing(model_id, whole=old is None) if read_vectors else set()
    systems: dict[str, SystemIndex] = {}
    in_effect: dict[str, SystemIndex] = {}
    # The part is the one `old` was made from, with its vectors (after the background mode's answer at once, the
    # tools the part changed are looked at again: their vectors were not read).
    same = old is not None and old.version[0] == version[0] and old.exact
    for system, newest in part.newest.items():
        base = old.systems.get(system) if old is not None and (same or system not in part.whole) else None
        changed = set() if same else part.changed[system]
        touched = None if base is None else changed | (fresh_vectors & part.tools[system].keys())
        views = [newest] if part.in_effect[system] is None else [newest, part.in_effect[system] or []]
        pk_lists = [part.newest_pks[system], part.in_effect_pks[system] or []][: len(views)]
        # When what is in effect first differs from the newest catalog (an import after a sign-off), `base` is what
        # was in effect: its tools not touched since are in effect as they were, so it is patched like the newest.
        befores = [base, old.in_effect.get(system) if old is not None and base is not None else None]
        made = _system(system, list(zip(views, pk_lists, strict=True)), befores[: len(views)], touched, part)
        systems[system] = made[0]
        in_effect[system] = made[-1]
    for gone in set(_tables) - set(systems):
        del _tables[gone]
    return RagIndex(version, model_id, systems, part.profiles, in_effect, exact=read_vectors)


def _system(
    system: str,
    views: list[tuple[list[Entry], list[int]]],
    befores: list[SystemIndex | None],
    touched: set[int] | None,
    part: CatalogPart,
) -> list[SystemIndex]:
    """The system's indexes (the newest, and what is in effect when it differs; each as its entries and their
    pks) over its slot table, with a slot appended for each text whose vector the table lacks; `touched` (None:
    every tool) the tools to look at again."""
    table = _tables.get(system) or empty_table(1)
    wanted: dict[SlotKey, dict[str, Any]] = {}
    # A view that holds the tools of the index it follows, in its order, is patched at the touched tools' places
    # (`patched_view`); any other is made over every tool. A Tool row's `id`, not `pk`, in the loops over every
    # tool: `pk` is a property that looks its field up (400,000 look-ups, 0.2 s of an update at 50,000 tools).
    patch = [
        touched is not None and _same_tools(pks, before, table) for (_, pks), before in zip(views, befores, strict=True)
    ]
    for (entries, _), before, patched in zip(views, befores, patch, strict=True):
        for t, declared, text_sha in _touched(entries, before, touched) if patched else entries:
            found = _listed_vector(t.id, text_sha) if touched is None or t.id in touched else None
            held = table.slots.get((t.id, text_sha)) if found is not None else None
            if found is not None and (held is None or held[1] != found[1]):
                wanted[(t.id, text_sha)] = declared | {"declared_id": t.declared_id}
    pieces = _pieces(wanted)
    if pieces:
        dim = pieces[0].whole.shape[0]
        table = appended(table if table.used and table.dim == dim else empty_table(dim), pieces)
    made = [
        _view(table, view, before, touched, part, system, patch=patched)
        for view, before, patched in zip(views, befores, patch, strict=True)
    ]
    served = np.zeros(table.used, dtype=bool)
    for index in made:
        if index.serving is not None and index.table is table:
            served |= index.serving
    if needs_compaction(table, served):
        table = compacted(table, served)
        made = [_view(table, view, None, None, part, system) for view in views]
    _tables[system] = table
    return made


def _view(
    table: SlotTable,
    view: tuple[list[Entry], list[int]],
    before: SystemIndex | None,
    touched: set[int] | None,
    part: CatalogPart,
    system: str,
    *,
    patch: bool = False,
) -> SystemIndex:
    """One index of the system: an untouched tool as `before` held it, any other with its slot when the table
    holds the vector of its text now, else none (stale or missing until the worker ran). `patch`: the view's
    tools are `before`'s in its order (`_same_tools`), so only the touched tools' places are looked at."""
    entries, pks = view
    floors, revision = part.floors.get(system, []), part.revisions.get(system)
    if patch and before is not None and touched is not None:
        tools = list(before.tools)
        changed = []
        for n in sorted(before.positions[pk] for pk in touched if pk in before.positions):
            now = _tool_now(table, *entries[n])
            if now != tools[n]:  # an equal one stays the same object: nothing derived from it is made again
                tools[n] = now
                changed.append(n)
        made = patched_view(table, before, tools, changed, floors, revision)
    else:
        if before is not None and before.table is not None and before.table.origin is not table.origin:
            before, touched = None, None
        kept = {t.pk: t for t in before.tools} if before is not None else {}
        tools = []
        for entry in entries:
            old = kept.get(entry[0].id)
            if old is not None and touched is not None and entry[0].id not in touched:
                tools.append(old)
            else:
                tools.append(_tool_now(table, *entry))
        made = system_view(table, tools, floors, revision, before)
    # The part's list of the view's pks (the same object while the order holds: the next update compares at once).
    made.__dict__["tool_pks"], made.__dict__["positions"] = pks, part.positions(pks)
    return made


def _tool_now(table: SlotTable, t: Tool, declared: dict[str, Any], text_sha: str) -> IndexedTool:
    """The tool as served: with its slot when the table holds the vector of its text now."""
    found = _listed_vector(t.id, text_sha)
    held = table.slots.get((t.id, text_sha))
    row = held[0] if found is not None and held is not None and held[1] == found[1] else None
    state = vector_state(text_sha, text_sha if found is not None else next(iter(_listing.get(t.id, {})), None))
    if state == CURRENT and row is None:  # listed but not held (the background mode's answer at once)
        state = STALE
    return _indexed_tool(t, declared, text_sha, row=row, state=state)


def _same_tools(pks: list[int], before: SystemIndex | None, table: SlotTable) -> bool:
    """Whether the view's tools (`pks`) are `before`'s in its order, over slots numbered as `table`'s."""
    if before is None or before.table is None or before.table.origin is not table.origin:
        return False
    return pks is before.tool_pks or pks == before.tool_pks


def _touched(entries: list[Entry], before: SystemIndex | None, touched: set[int] | None) -> list[Entry]:
    """The entries of the touched tools (`entries` being `before`'s tools in its order)."""
    assert before is not None and touched is not None
    return [entries[before.positions[pk]] for pk in sorted(touched) if pk in before.positions]


def _listed_vector(pk: int, text_sha: str) -> tuple[int, object] | None:
    return _listing.get(pk, {}).get(text_sha) if text_sha else None


def _read_listing(model_id: str, *, whole: bool) -> set[int]:
    """Bring `_listing` up to date; the tool pks whose vector rows changed (every listed pk when read whole).

    Since the last listing: the rows made or re-made since (a row id above the highest seen, or a time within
    LOOK_BACK of when the last listing was read), then every vector row of each tool among them that the listing
    does not hold as it is (a worker that stores a tool's vector deletes its vectors no text of the tool needs in
    the same transaction), then a count. Two plain reads rather than one semi-join: the planner cannot misjudge
    a join over a table whose statistics lag a bulk embedding (788 ms for 5,000 rows once)."""
    global _listed
    rows = ToolEmbedding.objects.filter(model_id=model_id)
    columns = ("pk", "tool_id", "text_sha256", "embedded_at")
    # Taken before the reads: a row committed after them is stamped before this (by less than LOOK_BACK).
    read_at = timezone.now()
    if not whole and _listed is not None:
        listed_at, top, _ = _listed
        recent = rows.filter(Q(pk__gt=top) | Q(embedded_at__gte=listed_at - LOOK_BACK)).values_list(*columns)
        new = sorted({tool_id for pk, tool_id, sha, at in recent if _listed_vector(tool_id, sha) != (pk, at)})
        found = [row for start in range(0, len(new), 2000) for row in _rows_of(rows, new[start : start + 2000])]
        changed, size = _listed_into(found, _listed[2])
        if rows.count() == size:
            _listed = (read_at, max([top, *(pk for pk, _, _, _ in found)]), size)
            return changed
    found = list(rows.values_list(*columns))
    _listing.clear()
    changed, size = _listed_into(found, 0)
    _listed = (read_at, max((pk for pk, _, _, _ in found), default=0), size)
    return changed


def _rows_of(rows: Any, tool_ids: list[int]) -> list[tuple[int, int, str, Any]]:
    """Every vector row (listing columns) of the tools."""
    return list(rows.filter(tool_id__in=tool_ids).values_list("pk", "tool_id", "text_sha256", "embedded_at"))


def _listed_into(found: list[tuple[int, int, str, Any]], size: int) -> tuple[set[int], int]:
    """`found` into the listing, as every vector of the tools it names; the tools whose vectors changed, and the
    listing's row count (`size` before)."""
    by_tool: dict[int, dict[str, tuple[int, object]]] = {}
    for pk, tool_id, sha, at in found:
        by_tool.setdefault(tool_id, {})[sha] = (pk, at)
    changed: set[int] = set()
    for tool_id, texts in by_tool.items():
        held = _listing.get(tool_id)
        if held != texts:
            size += len(texts) - len(held or ())
            _listing[tool_id] = texts
            changed.add(tool_id)
    return changed, size


def _pieces(wanted: dict[SlotKey, dict[str, Any]]) -> list[Piece]:
    """The stored vectors of the wanted texts, each with its phrases split and its lexical row, in key order."""
    ids = {_listing[pk][sha][0]: (pk, sha) for pk, sha in wanted}
    pieces: list[Piece] = []
    chunk = sorted(ids)
    for start in range(0, len(chunk), 2000):
        rows = ToolEmbedding.objects.filter(pk__in=chunk[start : start + 2000]).values_list(
            "pk", "dim", "vector", "phrases", "phrase_scheme"
        )
        for pk, dim, vector, phrases, scheme in rows:
            key = ids[pk]
            declared = wanted[key]
            whole = np.frombuffer(bytes(vector), dtype="<f4")
            cut = np.frombuffer(bytes(phrases), dtype="<f4").reshape(-1, dim)
            positive, negative = _split_phrases(cut, scheme, declared)
            text = lexical_text(declared["rag_description"], declared["rag_keywords"], declared["declared_id"])
            # The listing's time, not the row's: the row may be newer than the listing, read again next time.
            pieces.append(Piece(key, _listing[key[0]][key[1]][1], whole, positive, negative, text))
    return pieces


def _split_phrases(cut: np.ndarray, scheme: int, declared: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(positive, negative) phrase vectors; none when the row holds another count than the text has phrases (a
    row made before phrases, or by another scheme: the sweep re-embeds it)."""
    phrases = tool_phrases(declared["rag_description"], declared["rag_keywords"])
    if scheme != PHRASE_SCHEME or cut.shape[0] != len(phrases.all):
        empty = np.zeros((0, cut.shape[1]), dtype=np.float32)
        return empty, empty
    split = len(phrases.positive)
    return cut[:split], cut[split:]


def _indexed_tool(t: Tool, declared: dict[str, Any], text_sha: str, *, row: int | None, state: str) -> IndexedTool:
    return IndexedTool(
        pk=t.id,
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
