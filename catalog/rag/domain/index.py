"""The retrieval index as plain values: each system's live tools with the state of their vector, the matrix of
current vectors, the forced floors, and plan eligibility per profile.

Built from the database by `catalog.rag.selectors.index` and kept in process while the catalog and the vectors
hold still; everything here depends on the declarations only, so it is computed once per index, not per prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import InitVar, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from catalog.domain.budget import ManifestLine, manifest_line_of
from catalog.domain.profiles import is_plan_eligible
from catalog.rag.domain.hybrid import PhraseMatrix, phrase_matrix
from catalog.rag.domain.lexical import LexicalIndex, lexical_index, term_counts

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
    by_key: dict[str, IndexedTool]
    matrix: np.ndarray  # current vectors only, rows in `rows` order
    rows: list[IndexedTool]
    floors: list[tuple[str, str, list[str]]]  # (slug, trigger, tool ids)
    revision: object
    # The phrase vectors and the lexical rows of `rows`, in that order; none given: no phrases, no shared words.
    phrase_vectors: InitVar[PhraseMatrix | None] = None
    lexical_rows: InitVar[LexicalIndex | None] = None
    phrases: PhraseMatrix = field(init=False)
    lexical: LexicalIndex = field(init=False)
    _eligible: dict[str, tuple[dict[str, bool], np.ndarray]] = field(default_factory=dict)
    # An index patched after a catalog change (`patched`) keeps the matrices it was made from: the rows it serves;
    # None: every row.
    serving: np.ndarray | None = None

    def __post_init__(self, phrase_vectors: PhraseMatrix | None, lexical_rows: LexicalIndex | None) -> None:
        if phrase_vectors is None:
            empty = np.zeros((0, self.matrix.shape[1]), np.float32)
            phrase_vectors = phrase_matrix([(empty, empty)] * len(self.rows), self.matrix.shape[1])
        self.phrases = phrase_vectors
        self.lexical = lexical_rows if lexical_rows is not None else lexical_index([term_counts([""])] * len(self.rows))

    @cached_property
    def registry(self) -> dict[str, str]:
        """Canonical key → declared id, for ordering candidates."""
        return {t.key: t.declared_id for t in self.tools}

    @cached_property
    def always_included(self) -> list[str]:
        return [t.declared_id for t in self.tools if t.always_include]

    @cached_property
    def manifest_lines(self) -> dict[str, ManifestLine]:
        """Each tool's manifest line by canonical key: it depends on the declaration only, so once per index."""
        return {t.key: manifest_line_of(t) for t in self.tools}

    def eligibility(self, profile: IndexedProfile) -> tuple[dict[str, bool], np.ndarray]:
        """Plan eligibility under a profile: per key, and as a mask over the vector rows (cached per profile)."""
        cached = self._eligible.get(profile.slug)
        if cached is None:
            by_key = {
                t.key: is_plan_eligible(
                    plane=t.plane,
                    availability=t.availability,
                    declared_id=t.declared_id,
                    profile_availabilities=profile.availabilities,
                    profile_includes=profile.includes,
                )
                for t in self.tools
            }
            mask = np.array([by_key.get(t.key, False) for t in self.rows], dtype=bool)
            cached = (by_key, mask if self.serving is None else mask & self.serving)
            self._eligible[profile.slug] = cached
        return cached


@dataclass
class RagIndex:
    version: tuple[object, ...]
    model_id: str
    systems: dict[str, SystemIndex]  # the newest import (what non-clinical profiles see)
    profiles: dict[str, IndexedProfile]
    # What is in effect (what clinical profiles see); the same object as in `systems` when nothing awaits sign-off.
    in_effect: dict[str, SystemIndex] = field(default_factory=dict)
    # False: patched after a catalog change over the previous index's vectors (`patched`), until the exact one is
    # built in the background.
    exact: bool = True

    def served(self, system: str, *, clinical: bool) -> SystemIndex | None:
        return (self.in_effect if clinical else self.systems).get(system)


def patched(
    base: SystemIndex, tools: list[IndexedTool], floors: list[tuple[str, str, list[str]]], revision: object
) -> SystemIndex:
    """The system's tools now, over `base`'s matrices: at once after a catalog change, while the exact index is
    built. A tool keeps its row only when it still declares the text the row's vectors came from (`tools` carry
    the rows the caller kept); every other row of `base` (a tool retired, or whose text changed) is not served.
    Eligibility, floors and declarations are the new catalog's; only the lexical idf is still `base`'s."""
    rows = list(base.rows)
    serving = np.zeros(len(rows), dtype=bool)
    for t in tools:
        if t.row is not None:
            rows[t.row] = t
            serving[t.row] = True
    return SystemIndex(
        tools=tools,
        by_key={t.key: t for t in tools},
        matrix=base.matrix,
        rows=rows,
        floors=floors,
        revision=revision,
        phrase_vectors=base.phrases,
        lexical_rows=base.lexical,
        serving=serving,
    )
