"""The lexical signal: TF-IDF over character n-grams of a tool's words (catalog/rag/README.md, "Signals").

Character 3- to 5-grams within word boundaries (scikit-learn's `char_wb`) meet German compounds and inflections
half way: "Blutdruckverlauf" shares "blut", "druck", "verl" with "Blutdruck" and "Verlauf", "Wechselwirkungen" with
"Wechselwirkung". The n-grams are hashed (no vocabulary to fit), so each tool's row is computed from its own text
alone and kept per text: when one tool changes, only its row is computed and appended; the document frequencies
are corrected by the rows counted or dropped, and each row's norm under the new idf is one sparse product.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

import numpy as np
from scipy import sparse

N_FEATURES = 2**20
NGRAMS = (3, 5)


@cache
def _vectorizer() -> Any:
    """scikit-learn is imported when a text is first counted, not with this module: the URLconf (and so every
    `manage.py` command's system checks, `whoowns` included) imports the resolve API, and scikit-learn was 0.7 s
    of a 3 s start-up."""
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        analyzer="char_wb",
        ngram_range=NGRAMS,
        n_features=N_FEATURES,
        alternate_sign=False,
        norm=None,
        lowercase=True,
        dtype=np.float32,
    )


@cache
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | GERMAN_FUNCTION_WORDS


def term_counts(texts: Sequence[str]) -> sparse.csr_matrix:
    """One row of hashed n-gram counts per text (what is cached per tool text)."""
    return _vectorizer().transform(list(texts)).tocsr()


@dataclass(frozen=True)
class LexicalRows:
    """Rows of sublinear term frequencies (1 + log count) by hashed n-gram: `tf` one row per text, `squares` its
    squares (sharing the indices), `by_ngram` the same transposed (one row per n-gram: a prompt reads only its own
    n-grams' rows). What the rows are does not depend on the other rows, so rows are computed once per text and
    appended; only the idf (and with it each row's norm) depends on which rows are counted."""

    tf: sparse.csr_matrix
    squares: sparse.csr_matrix
    by_ngram: sparse.csr_matrix

    @property
    def count(self) -> int:
        return int(self.tf.shape[0])


def _of_tf(tf: sparse.csr_matrix) -> LexicalRows:
    squares = sparse.csr_matrix((tf.data * tf.data, tf.indices, tf.indptr), shape=tf.shape, copy=False)
    return LexicalRows(tf, squares, tf.T.tocsr())


def lexical_rows(counts: Sequence[sparse.csr_matrix]) -> LexicalRows:
    """The rows of the given per-text count rows (`term_counts`), in that order."""
    if not counts:
        return _of_tf(sparse.csr_matrix((0, N_FEATURES), dtype=np.float32))
    tf = sparse.vstack(counts, format="csr", dtype=np.float32)
    tf.data = (1 + np.log(tf.data)).astype(np.float32)
    return _of_tf(tf)


def joined(parts: Sequence[LexicalRows], rows: np.ndarray | None = None) -> LexicalRows:
    """One part of several, or of their `rows` only (a merge: it costs a transpose of every row, so it is done
    rarely)."""
    tf = sparse.vstack([p.tf for p in parts], format="csr", dtype=np.float32)
    return _of_tf(tf if rows is None else tf[rows])


def _by_part(parts: Sequence[LexicalRows], rows: np.ndarray) -> Iterator[tuple[LexicalRows, np.ndarray]]:
    """Each part with the given rows (numbered over the parts in order) that fall in it, as its own row numbers."""
    start = 0
    for part in parts:
        local = rows[(rows >= start) & (rows < start + part.count)] - start
        if len(local):
            yield part, local
        start += part.count


def _ngrams_of(parts: Sequence[LexicalRows], rows: np.ndarray) -> np.ndarray:
    """Every n-gram occurrence (once per row) of the given rows, numbered over the parts in order."""
    found = [
        part.tf.indices if len(local) == part.count else part.tf[local].indices for part, local in _by_part(parts, rows)
    ]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int32)


@dataclass(frozen=True)
class LexicalIndex:
    """TF-IDF cosine over `parts`' rows (numbered over the parts in order): the idf is smoothed over the rows
    `counted` marks (a system index's served rows), `norms` each row's length in TF-IDF space under it: computed
    when first scored (one sparse product over every row), so a view no request ranks over never pays for it
    (after an import at 50,000 tools a clinical profile's first resolve scores what is in effect only)."""

    parts: tuple[LexicalRows, ...]
    counted: np.ndarray  # bool per row
    df: np.ndarray  # int64 per n-gram: how many counted rows have it
    known: np.ndarray | None = field(default=None, repr=False, compare=False)  # the norms, when made with them

    @cached_property
    def norms(self) -> np.ndarray:
        """float32 per row (1 where a row has no n-gram)."""
        if self.known is not None:
            return self.known
        return _norms(self.parts, self.df, int(self.counted.sum()))

    @property
    def has_norms(self) -> bool:
        return self.known is not None or "norms" in self.__dict__

    @property
    def count(self) -> int:
        return sum(p.count for p in self.parts)

    @property
    def idf(self) -> np.ndarray:
        return _idf(int(self.counted.sum()), self.df)

    def scores(self, prompt: str) -> np.ndarray:
        """Cosine of the prompt's TF-IDF vector with every row (0 where no n-gram is shared)."""
        if self.count == 0:
            return np.zeros(0, dtype=np.float32)
        query = term_counts([prompt])
        idf = _idf(int(self.counted.sum()), self.df[query.indices])
        weights = (1 + np.log(query.data)) * idf  # sublinear tf, as the rows
        norm = float(np.sqrt(np.dot(weights, weights)))
        if norm == 0:
            return np.zeros(self.count, dtype=np.float32)
        # A sparse product with the prompt's few n-grams, not with a 2**20-wide vector; a row's own idf weights
        # are the prompt's for the n-grams both have.
        weights = (weights * idf / norm).astype(np.float32)
        dots = [np.asarray(p.by_ngram[query.indices].T @ weights, dtype=np.float32).ravel() for p in self.parts]
        return (np.concatenate(dots) / self.norms).astype(np.float32)

    def ngrams(self, row: int) -> np.ndarray:
        """The hashed n-grams of one row."""
        return _ngrams_of(self.parts, np.array([row]))


def _idf(n: int, df: np.ndarray) -> np.ndarray:
    return (np.log((1 + n) / (1 + df)) + 1).astype(np.float32)


def _norms(parts: Sequence[LexicalRows], df: np.ndarray, n: int) -> np.ndarray:
    idf = _idf(n, df)
    squared = idf * idf
    if not parts:
        return np.zeros(0, dtype=np.float32)
    norms = np.sqrt(np.concatenate([np.asarray(p.squares @ squared).ravel() for p in parts])).astype(np.float32)
    norms[norms == 0] = 1.0
    return norms


def counted_index(
    parts: Sequence[LexicalRows], counted: np.ndarray, before: LexicalIndex | None = None
) -> LexicalIndex:
    """The index over `parts` counting the rows `counted` marks; from `before` (the same rows and perhaps fewer,
    in the same order) only the rows counted or no longer counted since are read: the idf is recounted by
    difference, the norms made when first scored; with the same rows counted, the idf and the norms are `before`'s
    (and the norms of the rows appended since)."""
    parts = tuple(parts)
    if before is None:
        df = np.bincount(_ngrams_of(parts, np.flatnonzero(counted)), minlength=N_FEATURES).astype(np.int64)
        return LexicalIndex(parts, counted.copy(), df)
    was = np.zeros(len(counted), dtype=bool)
    was[: len(before.counted)] = before.counted
    added, dropped = np.flatnonzero(counted & ~was), np.flatnonzero(was & ~counted)
    if not len(added) and not len(dropped):  # the same rows counted: the same idf, so the same norms
        if not before.has_norms:  # never scored: made when first scored (no chain of unscored indexes kept)
            return LexicalIndex(parts, counted.copy(), before.df)
        grown = np.arange(len(before.counted), len(counted))
        tail = _norms_at(parts, grown, before.df, int(counted.sum()))
        return LexicalIndex(parts, counted.copy(), before.df, np.concatenate([before.norms, tail]))
    df = before.df.copy()
    np.add.at(df, _ngrams_of(parts, added), 1)  # per occurrence: two 2**20-wide counts would cost more
    np.subtract.at(df, _ngrams_of(parts, dropped), 1)
    return LexicalIndex(parts, counted.copy(), df)


def _norms_at(parts: Sequence[LexicalRows], rows: np.ndarray, df: np.ndarray, n: int) -> np.ndarray:
    """The norms of the given rows only (numbered over the parts in order)."""
    if not len(rows):
        return np.zeros(0, dtype=np.float32)
    idf = _idf(n, df)
    squared = idf * idf
    found = [np.asarray(part.squares[local] @ squared).ravel() for part, local in _by_part(parts, rows)]
    norms = np.sqrt(np.concatenate(found)).astype(np.float32)
    norms[norms == 0] = 1.0
    return norms


def lexical_index(rows: Sequence[sparse.csr_matrix]) -> LexicalIndex:
    """The index over the given per-text count rows, every one counted."""
    return counted_index([lexical_rows(rows)], np.ones(len(rows), dtype=bool))


# Words a prompt carries that no catalog author should add as a keyword: scikit-learn's English stop words and the
# German function words clinicians type most (the demo case set's prompts).
GERMAN_FUNCTION_WORDS = frozenset(
    "aber alle alles auch bitte dann dass dem den denn der des die dies diese diesem diesen dieser doch eine einem "
    "einen einer eines etwa für gibt habe haben hast hat hatte heute hier ihre ihrem ihren ihrer immer jetzt kann "
    "kannst können letzte letzten mache machen mach mein meine mir mit morgen nach nicht noch oder schon sein "
    "seine seinen seiner sich sind soll sollte über und unter vom von war welche welcher wann warum was weil wenn "
    "wie wieder wir wird wurde zum zur".split()
)
_WORD = re.compile(r"[^\W\d_]{4,}")  # letters only, four or more: numbers, dates and initials are no keywords
MISSING_SHARE = 0.5  # a word is missing when less than half of its n-grams occur in the tool's text


def words_missing(prompt: str, index: LexicalIndex, row: int, *, limit: int = 5) -> list[str]:
    """The prompt's words that the tool's text (row `row`) does not contain, even as part of a compound, in the
    prompt's order: what a catalog author could add to its ragKeywords."""
    present = index.ngrams(row)
    missing: list[str] = []
    for word in dict.fromkeys(_WORD.findall(prompt)):
        if word.lower() in _stop_words():
            continue
        grams = term_counts([word]).indices
        if len(grams) and float(np.isin(grams, present).mean()) < MISSING_SHARE:
            missing.append(word)
    return missing[:limit]
