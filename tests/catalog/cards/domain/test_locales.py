"""Locales: plural forms through Babel (CLDR), locale codes, fallback chains."""

from __future__ import annotations

import pytest

from catalog.cards.domain.locales import fallback_chain, normalize_locale, plural_spec


@pytest.mark.parametrize(("locale", "count"), [("de", 2), ("de-AT", 2), ("pl", 3), ("ar", 6), ("fr", 3), ("tr", 2)])
def test_babel_gives_each_locale_its_number_of_plural_forms(locale: str, count: int) -> None:
    assert plural_spec(locale).count == count


def test_plural_form_index_follows_the_cldr_rules() -> None:
    de, pl, ar = plural_spec("de"), plural_spec("pl"), plural_spec("ar")
    assert [de.index(n) for n in (0, 1, 2, 5)] == [1, 0, 1, 1]
    assert [pl.index(n) for n in (1, 2, 4, 5, 12, 22, 25)] == [0, 1, 1, 2, 2, 1, 2]
    assert [ar.index(n) for n in (0, 1, 2, 3, 11, 100)] == [0, 1, 2, 3, 4, 5]
    assert pl.label(0) == "n = 1" and pl.label(1).startswith("n = 2, 3, 4, 22")


def test_locale_codes_are_normalized_and_unknown_ones_refused() -> None:
    assert normalize_locale("de_at") == "de-AT" and normalize_locale("DE") == "de" and normalize_locale("pl") == "pl"
    for bad in ("xx", "deutsch!", ""):
        with pytest.raises(ValueError):
            normalize_locale(bad)


def test_regional_locales_fall_back_to_their_language_then_english() -> None:
    known = {"en": None, "de": None, "de-AT": "de", "de-CH": None, "fr": None}
    assert fallback_chain("de-AT", known) == ["de-AT", "de", "en"]
    assert fallback_chain("de-CH", known) == ["de-CH", "de", "en"]  # no fallback configured: its language
    assert fallback_chain("fr", known) == ["fr", "en"]
    assert fallback_chain("en", known) == ["en"]
    assert fallback_chain("a-B", {"a-B": "c", "c": "a-B", "en": None}) == ["a-B", "c", "en"]  # a cycle ends
