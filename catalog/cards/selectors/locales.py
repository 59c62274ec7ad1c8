"""Reads per locale: the locales in the order pages list them, their fallback chains, how complete each is,
and FHIR status coverage. A fixed number of queries whatever the number of strings (the tests assert it)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count

from catalog.cards.domain.locales import SOURCE_LOCALE, fallback_chain
from catalog.cards.domain.valuesets import CoverageRow, coverage
from catalog.cards.domain.vocabulary import Severity, State
from catalog.models import CardFinding, CardLocale, CardString, CardTranslation


def locales() -> list[CardLocale]:
    """Source first, then the required locales, then the rest; regional ones after their parent."""
    rows = list(CardLocale.objects.select_related("fallback"))
    return sorted(rows, key=lambda loc: (loc.code != SOURCE_LOCALE, not loc.required, loc.code))


def chains(locs: Sequence[CardLocale]) -> dict[str, list[str]]:
    fallbacks = {loc.code: (loc.fallback.code if loc.fallback is not None else None) for loc in locs}
    return {loc.code: fallback_chain(loc.code, fallbacks) for loc in locs}


@dataclass(frozen=True)
class Completion:
    locale: CardLocale
    total: int
    translated: int  # translated or reviewed
    reviewed: int
    fuzzy: int
    with_errors: int

    @property
    def percent(self) -> int:
        return int(100 * self.translated / self.total) if self.total else 100

    @property
    def missing(self) -> int:
        return max(0, self.total - self.translated - self.fuzzy)


def completion(locs: Sequence[CardLocale]) -> list[Completion]:
    """Per locale: how much is translated, reviewed, fuzzy, and how many strings fail an error check."""
    total = CardString.objects.count()
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for row in CardTranslation.objects.values("locale_id", "state").annotate(n=Count("id")).order_by():
        counts[row["locale_id"]][row["state"]] = row["n"]
    errors = dict(
        CardFinding.objects.filter(severity=Severity.ERROR, locale__isnull=False)
        .values("locale_id")
        .annotate(n=Count("string_id", distinct=True))
        .order_by()
        .values_list("locale_id", "n")
    )
    result = []
    for loc in locs:
        if loc.code == SOURCE_LOCALE:
            continue
        c = counts.get(loc.pk, {})
        result.append(
            Completion(
                loc,
                total,
                c.get(State.TRANSLATED, 0) + c.get(State.REVIEWED, 0),
                c.get(State.REVIEWED, 0),
                c.get(State.FUZZY, 0),
                errors.get(loc.pk, 0),
            )
        )
    return result


def coverage_table(locs: Sequence[CardLocale]) -> list[CoverageRow]:
    """Per value set and locale: codes with a label, with only an English one, and with none (raw code)."""
    labels: dict[str, set[str]] = defaultdict(set)
    labels[SOURCE_LOCALE] = set(CardString.objects.filter(key__startswith="status.").values_list("key", flat=True))
    for code, key in CardTranslation.objects.filter(ships=True, string__key__startswith="status.").values_list(
        "locale__code", "string__key"
    ):
        labels[code].add(key)
    return coverage([loc.code for loc in locs], chains(locs), labels)
