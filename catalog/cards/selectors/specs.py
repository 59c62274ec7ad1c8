"""What the checks are given, read from the rows and the settings: a string and a locale as the domain's
plain specs, and the slots' maximum lengths with a deployment's overrides."""

from __future__ import annotations

from django.conf import settings

from catalog.cards.domain.checks import LocaleSpec, StringSpec
from catalog.cards.domain.locales import SOURCE_LOCALE
from catalog.cards.domain.vocabulary import SLOT_MAX_CHARS
from catalog.models import CardLocale, CardString


def slot_max_chars() -> dict[str, int]:
    """The slots' maximum lengths; a deployment may override them with CONDOR_CARD_SLOT_MAX_CHARS."""
    return {**SLOT_MAX_CHARS, **getattr(settings, "CONDOR_CARD_SLOT_MAX_CHARS", {})}


def string_spec(string: CardString) -> StringSpec:
    return StringSpec(string.key, string.source, string.source_plural, string.slot, string.max_chars)


def locale_spec(locale: CardLocale) -> LocaleSpec:
    regional = locale.fallback is not None and locale.fallback.code != SOURCE_LOCALE
    return LocaleSpec(locale.code, required=locale.required, regional=regional)
