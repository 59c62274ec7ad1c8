"""The retrieval index as plain values: each system's live tools with the state of their vector, the matrix of
current vectors, the forced floors, and plan eligibility per profile.

Built from the database by `catalog.rag.selectors.index` and kept in process while the catalog and the vectors
hold still; everything here depends on the declarations only, so it is computed once per index, not per prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from catalog.domain.budget import ManifestLine, manifest_line_of
from catalog.domain.profiles import plan_eligible_under
from catalog.rag.domain.hybrid import PhraseMatrix, phrase_matrix
from catalog.rag.domain.layered import layered
from catalog.rag.domain.lexical import LexicalIndex, counted_index, lexical_index, term_counts
from catalog.rag.domain.slots import SlotTable, empty_table

# The state of a tool's vector for the configured model.
CURRENT = "current"  # made from the text the tool has now
STALE = "stale"  # made from an older text
MISSING = "missing"  # not embedded yet
NO_TEXT = "no-text"  # nothing to embed: never a retrieval candidate


def vector_state(text_sha256: str, vector_text_sha256: str | None) -> str:
    """`text_sha256`: the hash of the tool's text now ("" when it has none); `vector_text_sha256`: the hash of
    the text its stored vector came from (None when it has no vector)."""
    if not text_sha256:
        return NO_TEXT
    if vector_text_sha256 is None:
        return MISSING
    return CURRENT if vector_text_sha256 == text_sha256 else STALE


@dataclass(frozen=True)
class IndexedTool:
    pk: int
    system: str
    declared_id: str
    key: str
    plane: str
    availability: str
    always_include: bool
    rag_description: str
    description: str
    instruction_fragment: str | None
    input_schema: dict[str, Any] | None
    has_text: bool
    row: int | None  # row in the system's vector matrix; None when missing or stale
    vector_state: str  # CURRENT | STALE | MISSING | NO_TEXT
    text_sha256: str = ""  # the hash of the embedded text this declaration has (what its row's vectors came from)


@dataclass(frozen=True)
class IndexedProfile:
    """A catalog profile as eligibility needs it."""

    slug: str
    system: str
    availabilities: Sequence[str]
    includes: Sequence[str]
    clinical: bool = False


@dataclass
class SystemIndex:
    tools: list[IndexedTool]
    by_key: Mapping[str, IndexedTool]  # a dict, or one made from the index it follows (`layered`)
    matrix: np.ndarray  # one row per slot of `table` (or per current vector when made by hand)
    rows: list[IndexedTool]  # the tool of each row (any placeholder where `serving` is false)
    floors: list[tuple[str, str, list[str]]]  # (slug, trigger, tool ids)
    revision: object
    # The phrase vectors and the lexical rows of `rows`, in that order; none given: no phrases, no shared words.
    phrase_vectors: InitVar[PhraseMatrix | None] = None
    lexical_rows: InitVar[LexicalIndex | None] = None
    phrases: PhraseMatrix = field(init=False)
    lexical: LexicalIndex = field(init=False)
    # profile slug → (the profile, eligibility by key, by row before `serving`, by row and served)
    _eligible: dict[str, tuple[IndexedProfile, Mapping[str, bool], np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )
    serving: np.ndarray | None = None  # the rows this index serves (a tool's current vector); None: every row
    order: np.ndarray | None = None  # each row's tool's place in declared-id order (ties); None: the row number
    table: SlotTable | None = None  # the slots the rows are (shared with the other index of the system)

    def __post_init__(self, phrase_vectors: PhraseMatrix | None, lexical_rows: LexicalIndex | None) -> None:
        if phrase_vectors is None:
            empty = np.zeros((0, self.matrix.shape[1]), np.float32)
            phrase_vectors = phrase_matrix([(empty, empty)] * len(self.rows), self.matrix.shape[1])
        self.phrases = phrase_vectors
        self.lexical = lexical_rows if lexical_rows is not None else lexical_index([term_counts([""])] * len(self.rows))

    @property
    def retrievable(self) -> bool:
        """Whether any tool has a current vector (else the snapshot is policy-only)."""
        return bool(self.rows) if self.serving is None else bool(self.serving.any())

    @cached_property
    def positions(self) -> dict[int, int]:
        """Each tool's place in `tools` by pk."""
        return {t.pk: n for n, t in enumerate(self.tools)}

    @cached_property
    def tool_pks(self) -> list[int]:
        return [t.pk for t in self.tools]

    @cached_property
    def registry(self) -> Mapping[str, str]:
        """Canonical key → declared id, for ordering candidates."""
        return {t.key: t.declared_id for t in self.tools}

    @cached_property
    def always_included(self) -> list[str]:
        return [t.declared_id for t in self.tools if t.always_include]

    @cached_property
    def manifest_lines(self) -> Mapping[str, ManifestLine]:
        """Each tool's manifest line by canonical key: it depends on the declaration only, so once per index."""
        return {t.key: manifest_line_of(t) for t in self.tools}

    def eligibility(self, profile: IndexedProfile) -> tuple[Mapping[str, bool], np.ndarray]:
        """Plan eligibility under a profile: per key, and as a mask over the vector rows (cached per profile)."""
        cached = self._eligible.get(profile.slug)
        if cached is None or cached[0] != profile:
            by_key = {t.key: _eligible(t, profile) for t in self.tools}
            by_row = np.array([by_key.get(t.key, False) for t in self.rows], dtype=bool)
            cached = (profile, by_key, by_row, by_row if self.serving is None else by_row & self.serving)
            self._eligible[profile.slug] = cached
        return cached[1], cached[3]

    def ready_like(self, before: SystemIndex, profiles: Mapping[str, IndexedProfile]) -> None:
        """Compute now what `before` had computed when a resolution first ranked over it: the lexical norms and the
        eligibility of each profile it served (by the profiles' current definitions), so that the first resolution
        over this index, which follows it, pays neither (the watcher's update)."""
        if before.lexical.has_norms:
            self.lexical.norms  # noqa: B018 - computed and kept on first read
        for slug in list(before._eligible):
            profile = profiles.get(slug)
            if profile is not None:
                self.eligibility(profile)


def _eligible(t: IndexedTool, profile: IndexedProfile) -> bool:
    return plan_eligible_under(
        profile, plane=t.plane, availability=t.availability, declared_id=t.declared_id, system=t.system
    )


_PLACEHOLDER = IndexedTool(0, "", "", "", "", "", False, "", "", None, None, False, None, NO_TEXT)


def system_view(
    table: SlotTable,
    tools: list[IndexedTool],
    floors: list[tuple[str, str, list[str]]],
    revision: object,
    before: SystemIndex | None = None,
) -> SystemIndex:
    """The index of `tools` (declared-id order, each with its slot of `table` as `row`, or none) over `table`.

    `before`: the index this one follows. What depends on one declaration only (manifest lines, eligibility per
    profile) is taken from it for every tool it holds unchanged (the same object) and computed for the others;
    the lexical idf is corrected by the rows served or dropped since, while `table` numbers slots as `before`'s."""
    served_rows = np.fromiter((-1 if t.row is None else t.row for t in tools), np.int64, len(tools))
    places = np.flatnonzero(served_rows >= 0)
    if not len(places):  # nothing to rank: no rows at all (the snapshot is policy-only)
        table = empty_table(table.dim)
    slots = served_rows[places]
    serving = np.zeros(table.used, dtype=bool)
    serving[slots] = True
    order = np.full(table.used, len(tools), dtype=np.int64)
    order[slots] = places
    rows = [_PLACEHOLDER] * table.used
    for n, slot in zip(places.tolist(), slots.tolist(), strict=True):
        rows[slot] = tools[n]
    same_slots = before is not None and before.table is not None and before.table.origin is table.origin
    lexical = counted_index(table.lexical, serving, before.lexical if same_slots and before is not None else None)
    view = _over(table, tools, {t.key: t for t in tools}, rows, serving, order, lexical, floors, revision)
    if before is not None:
        _carry(view, before, same_slots=same_slots)
    return view


def _over(
    table: SlotTable,
    tools: list[IndexedTool],
    by_key: Mapping[str, IndexedTool],
    rows: list[IndexedTool],
    serving: np.ndarray,
    order: np.ndarray,
    lexical: LexicalIndex,
    floors: list[tuple[str, str, list[str]]],
    revision: object,
) -> SystemIndex:
    """A system index over `table`'s matrices (what `system_view` and `patched_view` both make)."""
    return SystemIndex(
        tools=tools,
        by_key=by_key,
        matrix=table.matrix,
        rows=rows,
        floors=floors,
        revision=revision,
        phrase_vectors=table.phrases,
        lexical_rows=lexical,
        serving=serving,
        order=order,
        table=table,
    )


def _carry(view: SystemIndex, before: SystemIndex, *, same_slots: bool) -> None:
    """`before`'s per-declaration values into `view`, computed again only for the tools that changed."""
    kept = {id(t) for t in before.tools}
    changed = [t for t in view.tools if id(t) not in kept]
    now = {id(t) for t in view.tools} if len(view.tools) != len(before.tools) or changed else kept
    gone = [t.key for t in before.tools if id(t) not in now and t.key not in view.by_key]
    _carry_values(view, before, changed, gone, eligibility=same_slots)


def _carry_values(
    view: SystemIndex, before: SystemIndex, changed: list[IndexedTool], gone: list[str], *, eligibility: bool
) -> None:
    """`before`'s registry, manifest lines and (with `eligibility`: `view` numbers slots as `before`) per-profile
    eligibility into `view`: the keys `gone` dropped, the `changed` tools computed again, every other taken
    (`layered`: in the time of the change, not of the catalog)."""
    for name, value_of in (("registry", _declared_id), ("manifest_lines", manifest_line_of)):
        if name in before.__dict__:
            view.__dict__[name] = layered(before.__dict__[name], [(t.key, value_of(t)) for t in changed], gone)
    assert view.serving is not None
    for slug, (profile, by_key, by_row, _) in before._eligible.items() if eligibility else ():
        flags = {t.key: _eligible(t, profile) for t in changed}
        grown = np.zeros(len(view.rows), dtype=bool)
        grown[: len(by_row)] = by_row
        for t in changed:
            if t.row is not None:
                grown[t.row] = flags[t.key]
        view._eligible[slug] = (profile, layered(by_key, flags.items(), gone), grown, grown & view.serving)


def patched_view(
    table: SlotTable,
    before: SystemIndex,
    tools: list[IndexedTool],
    changed: list[int],
    floors: list[tuple[str, str, list[str]]],
    revision: object,
) -> SystemIndex:
    """`before` with the tools at the places `changed` replaced: `tools` holds the same pks in the same order as
    `before.tools`, and `table` numbers its slots as `before.table` (it may have grown). What `system_view` computes
    for every tool is copied from `before` and corrected at those places only (array and dict copies, no loop over
    the tools): the cost of an update after a change of ten tools does not grow with the catalog's Python work."""
    assert before.serving is not None and before.order is not None and before.table is not None
    used, count = table.used, len(tools)
    serving = np.zeros(used, dtype=bool)
    serving[: len(before.serving)] = before.serving
    order = np.full(used, count, dtype=np.int64)
    order[: len(before.order)] = before.order
    rows = before.rows + [_PLACEHOLDER] * (used - len(before.rows))
    dropped = []
    for n in changed:  # first every old slot (two changed tools may trade slots), then the new ones
        old = before.tools[n]
        if old.row is not None:
            serving[old.row], order[old.row], rows[old.row] = False, count, _PLACEHOLDER
        if before.by_key.get(old.key) is old:
            dropped.append(old.key)
    for n in changed:
        new = tools[n]
        if new.row is not None:
            serving[new.row], order[new.row], rows[new.row] = True, n, new
    by_key = layered(before.by_key, [(tools[n].key, tools[n]) for n in changed], dropped)
    same_rows = table.lexical is before.table.lexical and np.array_equal(serving, before.serving)
    lexical = before.lexical if same_rows else counted_index(table.lexical, serving, before.lexical)
    view = _over(table, tools, by_key, rows, serving, order, lexical, floors, revision)
    view.__dict__["positions"], view.__dict__["tool_pks"] = before.positions, before.tool_pks
    _carry_at(view, before, changed)
    return view


def _carry_at(view: SystemIndex, before: SystemIndex, changed: list[int]) -> None:
    """`before`'s per-declaration values into `view` (same tools, same order), corrected at the places `changed`."""
    pairs = [(before.tools[n], view.tools[n]) for n in changed]
    gone = [old.key for old, new in pairs if old.key != new.key]
    _carry_values(view, before, [new for _, new in pairs], gone, eligibility=True)
    if "always_included" in before.__dict__ and all(old.always_include == new.always_include for old, new in pairs):
        view.__dict__["always_included"] = before.always_included


def _declared_id(t: IndexedTool) -> str:
    return t.declared_id


@dataclass
class RagIndex:
    version: tuple[object, ...]
    model_id: str
    systems: dict[str, SystemIndex]  # the newest import (what non-clinical profiles see)
    profiles: dict[str, IndexedProfile]
    # What is in effect (what clinical profiles see); the same object as in `systems` when nothing awaits sign-off.
    in_effect: dict[str, SystemIndex] = field(default_factory=dict)
    # False: updated after a catalog change without reading the vectors (the background mode), until the exact
    # one is made in the background.
    exact: bool = True

    def served(self, system: str, *, clinical: bool) -> SystemIndex | None:
        return (self.in_effect if clinical else self.systems).get(system)
