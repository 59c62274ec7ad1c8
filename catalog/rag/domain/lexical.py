"""The lexical signal: TF-IDF over character n-grams of a tool's words (TOOLS.md, "Tool-RAG", signals).

Character 3- to 5-grams within word boundaries (scikit-learn's `char_wb`) meet German compounds and inflections
half way: "Blutdruckverlauf" shares "blut", "druck", "verl" with "Blutdruck" and "Verlauf", "Wechselwirkungen" with
"Wechselwirkung". The n-grams are hashed (no vocabulary to fit), so each tool's row is computed from its own text
alone and kept per text: when one tool changes, only its row is computed again; the inverse document frequencies
are recounted over the rows, which costs a sparse column sum.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, HashingVectorizer

N_FEATURES = 2**20
NGRAMS = (3, 5)
_VECTORIZER = HashingVectorizer(
    analyzer="char_wb",
    ngram_range=NGRAMS,
    n_features=N_FEATURES,
    alternate_sign=False,
    norm=None,
    lowercase=True,
    dtype=np.float32,
)


def term_counts(texts: Sequence[str]) -> sparse.csr_matrix:
    """One row of hashed n-gram counts per text (what is cached per tool text)."""
    return _VECTORIZER.transform(list(texts)).tocsr()


@dataclass(frozen=True)
class LexicalIndex:
    """Rows in the system index's row order, each unit length in TF-IDF space; `idf` per hashed n-gram.
    `by_ngram` is the same matrix transposed (one row per n-gram): a prompt reads only its own n-grams' rows."""

    matrix: sparse.csr_matrix
    idf: np.ndarray
    by_ngram: sparse.csr_matrix

    def scores(self, prompt: str) -> np.ndarray:
        """Cosine of the prompt's TF-IDF vector with every row (0 where no n-gram is shared)."""
        if self.matrix.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        query = term_counts([prompt])
        weights = (1 + np.log(query.data)) * self.idf[query.indices]  # sublinear tf, as the rows
        norm = float(np.sqrt(np.dot(weights, weights)))
        if norm == 0:
            return np.zeros(self.matrix.shape[0], dtype=np.float32)
        # A sparse product with the prompt's few n-grams, not with a 2**20-wide vector.
        rows = self.by_ngram[query.indices]
        return np.asarray(rows.T @ (weights / norm), dtype=np.float32).ravel()


def lexical_index(rows: Sequence[sparse.csr_matrix]) -> LexicalIndex:
    """The index over the given per-tool count rows: smoothed idf over these documents, sublinear tf, unit rows."""
    if not rows:
        empty = sparse.csr_matrix((0, N_FEATURES), dtype=np.float32)
        return LexicalIndex(empty, np.ones(N_FEATURES, np.float32), empty.T.tocsr())
    counts = sparse.vstack(rows, format="csr", dtype=np.float32)
    n = counts.shape[0]
    df = np.bincount(counts.indices, minlength=N_FEATURES)
    idf = (np.log((1 + n) / (1 + df)) + 1).astype(np.float32)
    weighted = counts.copy()
    weighted.data = (1 + np.log(weighted.data)) * idf[weighted.indices]
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    matrix = sparse.csr_matrix(sparse.diags(1 / norms) @ weighted, dtype=np.float32)
    return LexicalIndex(matrix, idf, matrix.T.tocsr())


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
    present = index.matrix[row].indices
    missing: list[str] = []
    for word in dict.fromkeys(_WORD.findall(prompt)):
        if word.lower() in ENGLISH_STOP_WORDS or word.lower() in GERMAN_FUNCTION_WORDS:
            continue
        grams = term_counts([word]).indices
        if len(grams) and float(np.isin(grams, present).mean()) < MISSING_SHARE:
            missing.append(word)
    return missing[:limit]
