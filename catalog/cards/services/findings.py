"""Recomputing what the checks say: every write calls `findings_refresh` for what it touched (in its
transaction), and `cards_version_bump`, the cache key of the bundles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db.models import F, Q
from django.utils import timezone

from catalog.cards.domain.checks import FindingData, check_key, check_translation, ships
from catalog.cards.domain.locales import REQUIRED_LOCALES, SOURCE_LOCALE
from catalog.cards.domain.vocabulary import Check, State
from catalog.cards.selectors.specs import locale_spec, slot_max_chars, string_spec
from catalog.models import CardFinding, CardLocale, CardsState, CardString, CardTranslation


def cards_version_bump() -> None:
    CardsState.objects.get_or_create(singleton=True)
    CardsState.objects.filter(singleton=True).update(version=F("version") + 1, changed_at=timezone.now())


def base_locales_ensure() -> dict[str, CardLocale]:
    for code in REQUIRED_LOCALES:
        CardLocale.objects.get_or_create(code=code, defaults={"required": True})
    return {loc.code: loc for loc in CardLocale.objects.select_related("fallback")}


def _finding_rows(string: CardString, locale: CardLocale | None, found: Iterable[FindingData]) -> list[CardFinding]:
    return [
        CardFinding(
            string=string,
            locale=locale,
            check_name=f.check.value,
            severity=f.severity.value,
            message=f.message,
            details=f.details,
        )
        for f in found
    ]


def findings_refresh(strings: Sequence[CardString] | None, locales: Sequence[CardLocale] | None = None) -> None:
    """Recompute the findings and the `ships` flags of these strings (None: all) in these locales (None: all,
    and the key-level findings too). Bulk: an import of thousands of strings stays a handful of queries."""
    all_locales = list(CardLocale.objects.select_related("fallback"))
    targets = list(locales) if locales is not None else all_locales
    source = next((loc for loc in all_locales if loc.code == SOURCE_LOCALE), None)
    string_list = list(strings) if strings is not None else list(CardString.objects.all())
    if not string_list or not targets:
        return
    string_filter = Q() if strings is None else Q(string__in=[s.pk for s in string_list])
    translations = {
        (t.string_id, t.locale_id): t
        for t in CardTranslation.objects.filter(string_filter, locale__in=[loc.pk for loc in targets])
    }
    stale = CardFinding.objects.filter(string_filter)
    if locales is not None:
        stale = stale.filter(locale__in=[loc.pk for loc in targets])
    stale.delete()
    limits = slot_max_chars()
    rows: list[CardFinding] = []
    now_shipping: list[int] = []
    now_held: list[int] = []
    specs = {loc.pk: locale_spec(loc) for loc in targets}
    for string in string_list:
        spec = string_spec(string)
        if locales is None:
            for f in check_key(spec, limits):
                rows += _finding_rows(string, None if f.check == Check.NEVER_LOCALIZE else source, [f])
        for loc in targets:
            if loc.code == SOURCE_LOCALE:
                continue
            t = translations.get((string.pk, loc.pk))
            forms = t.forms if t is not None and t.state != State.UNTRANSLATED else None
            found = check_translation(
                spec, specs[loc.pk], forms, same_as_source=bool(t and t.same_as_source), slot_max=limits
            )
            rows += _finding_rows(string, loc, found)
            if t is not None:
                shipping = ships(t.state, found)
                if t.ships != shipping:
                    t.ships = shipping
                    (now_shipping if shipping else now_held).append(t.pk)
    CardFinding.objects.bulk_create(rows, batch_size=2000)
    _ships_update(now_shipping, now_held)


def _ships_update(now_shipping: list[int], now_held: list[int]) -> None:
    # Two plain UPDATEs (in chunks) rather than bulk_update's CASE per row: an import flips thousands.
    for ids, value in ((now_shipping, True), (now_held, False)):
        for i in range(0, len(ids), 5000):
            CardTranslation.objects.filter(pk__in=ids[i : i + 5000]).update(ships=value)
