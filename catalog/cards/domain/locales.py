"""Locales of the cards: codes as the web writes them, each locale's gettext plural forms as Babel (CLDR)
knows them, and the fallback chain a card looks its texts up along (de-AT → de → en)."""

from __future__ import annotations

import gettext
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

from babel import Locale, UnknownLocaleError
from babel.messages.plurals import get_plural

SOURCE_LOCALE = "en"
# The clinic is German-first: these locales must be complete.
REQUIRED_LOCALES = ("en", "de")


def normalize_locale(code: str) -> str:
    """`de_at`, `de-AT`, `DE-at` → `de-AT` (BCP 47 as the web uses it); ValueError when Babel does not
    know the language."""
    raw = (code or "").strip().replace("_", "-")
    if not re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", raw):
        raise ValueError(f"locale {code!r} is not a language code like de or de-AT")
    try:
        parsed = Locale.parse(raw, sep="-")
    except (UnknownLocaleError, ValueError) as exc:
        raise ValueError(f"locale {code!r} is unknown to Babel (CLDR)") from exc
    parts = [parsed.language]
    if parsed.script:
        parts.append(parsed.script)
    if parsed.territory:
        parts.append(parsed.territory)
    return "-".join(parts)


def babel_locale(code: str) -> str:
    """`de-AT` → `de_AT`: gettext's directory names and Babel's identifiers."""
    return code.replace("-", "_")


def language_of(code: str) -> str:
    return code.split("-", 1)[0]


@dataclass(frozen=True)
class PluralSpec:
    """A locale's gettext plural forms as Babel knows them (German 2, Polish 3, Arabic 6)."""

    locale: str
    count: int
    expr: str
    # For each form, the first numbers it is used for (to label the form for a translator).
    samples: tuple[tuple[int, ...], ...]
    # Forms used for exactly one number (may omit {count}).
    single: frozenset[int]

    def index(self, n: int) -> int:
        return _plural_function(self.expr)(n)

    def label(self, form: int) -> str:
        numbers = self.samples[form]
        if form in self.single:
            return f"n = {numbers[0]}"
        return "n = " + ", ".join(str(n) for n in numbers[:5]) + ", …"


@cache
def _plural_function(expr: str) -> Callable[[int], int]:
    # The stdlib turns a gettext Plural-Forms expression into a function, as gettext itself does.
    return gettext.c2py(expr)


@cache
def plural_spec(code: str) -> PluralSpec:
    rule = get_plural(babel_locale(code))
    select = _plural_function(rule.plural_expr)
    seen: dict[int, list[int]] = {i: [] for i in range(rule.num_plurals)}
    for n in range(0, 1000):
        seen[select(n)].append(n)
    samples = tuple(tuple(seen[i][:6]) for i in range(rule.num_plurals))
    single = frozenset(i for i, numbers in seen.items() if len(numbers) == 1)
    return PluralSpec(code, rule.num_plurals, rule.plural_expr, samples, single)


def fallback_chain(code: str, fallbacks: Mapping[str, str | None]) -> list[str]:
    """The locales a card looks in, most specific first, ending with the source: de-AT → de → en.

    `fallbacks` maps each known locale to its configured fallback; a locale without one falls back to its
    language (de-AT → de) when that is known, else to the source.
    """
    chain = [code]
    current = code
    while current != SOURCE_LOCALE:
        nxt = fallbacks.get(current)
        if not nxt:
            language = language_of(current)
            nxt = language if language != current and language in fallbacks else SOURCE_LOCALE
        if nxt in chain:  # a cycle in configuration must not hang a request
            break
        chain.append(nxt)
        current = nxt
    if chain[-1] != SOURCE_LOCALE:
        chain.append(SOURCE_LOCALE)
    return chain
