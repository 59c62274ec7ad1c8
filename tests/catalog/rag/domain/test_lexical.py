"""The lexical signal meets German compounds and inflections half way, and scores only what is shared."""

from __future__ import annotations

import numpy as np
import pytest

from catalog.rag.domain.lexical import lexical_index, term_counts, words_missing

TOOLS = [
    "Blutdruckverlauf anzeigen\nget vitals trend",
    "Arzneimittelwechselwirkung prüfen\ncheck drug interactions",
    "Rechnung stornieren\nvoid invoice",
]


def index():  # type: ignore[no-untyped-def]
    return lexical_index([term_counts([t]) for t in TOOLS])


def test_a_compound_in_the_tool_meets_its_parts_in_the_prompt() -> None:
    scores = index().scores("wie hat sich der Blutdruck im Verlauf entwickelt")
    assert int(np.argmax(scores)) == 0 and scores[0] > 0.1


def test_an_inflected_compound_in_the_prompt_meets_the_tool() -> None:
    scores = index().scores("gibt es Wechselwirkungen mit Ibuprofen?")
    assert int(np.argmax(scores)) == 1


def test_rows_are_unit_length_and_a_prompt_with_nothing_shared_scores_zero() -> None:
    built = index()
    for n, text in enumerate(TOOLS):  # a text scores 1 with itself: its row is unit length in TF-IDF space
        assert built.scores(text)[n] == pytest.approx(1.0, abs=1e-5)
    assert np.all(built.scores("qq") == 0)
    self_scores = built.scores(TOOLS[2])
    assert self_scores[2] > 0.99 and self_scores[2] == self_scores.max()


def test_an_index_of_no_tools_scores_nothing() -> None:
    assert lexical_index([]).scores("Blutdruck").shape == (0,)


def test_the_words_a_tool_lacks_are_named_but_not_its_compound_parts_nor_function_words() -> None:
    built = index()
    missing = words_missing("Bitte den Blutdruck und die Herzfrequenz der letzten Woche zeigen", built, 0)
    assert "Blutdruck" not in missing  # part of "Blutdruckverlauf"
    assert "Herzfrequenz" in missing and "Woche" in missing
    assert not {"Bitte", "den", "und", "die", "der", "letzten"} & set(missing)
    assert words_missing("check drug interactions", built, 1) == []
    assert len(words_missing("alpha bravo charlie delta foxtrot golfs hotel india", built, 2)) == 5  # at most five
