"""What leaves the console: the JSON bundles the web frontend loads (cached per card-strings version, with
an ETag over their bytes) and the gettext catalogs (cards.pot, one cards.po per locale).

Reads: each returns bytes built from the rows and changes nothing a person governs. Writing the files is the
caller's (manage.py cards_export, the export download); the only thing kept is the bundle cache, a memo keyed by
the card-strings version that every write bumps, so it never needs invalidating. The cache is only a memo: while
it is down (Redis away) bundles are built from the rows, with the same bytes and ETag, and a warning is logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from django.core.cache import cache
from django.db.models import Max
from django.utils import timezone
from django.utils.http import quote_etag

from catalog.cards.domain.bundles import bundle_document, texts_along_chain
from catalog.cards.domain.keys import never_localize_reason
from catalog.cards.domain.locales import SOURCE_LOCALE
from catalog.cards.domain.pofiles import SourceEntry, TranslationEntry, write_locale, write_template
from catalog.cards.selectors.locales import chains, locales
from catalog.models import CardLocale, CardsState, CardString, CardTranslation

logger = logging.getLogger("condor.cards")


@dataclass(frozen=True)
class Bundle:
    locale: str
    body: bytes
    etag: str


def cards_version() -> str:
    """The version every write bumps, with the time of that write: a restored or re-created database that
    counts from the same number again still never matches a cached bundle of another state. Read on every
    bundle request: one small query."""
    row = CardsState.objects.filter(singleton=True).values_list("version", "changed_at").first()
    return f"{row[0]}-{row[1].timestamp():.6f}" if row else "0"


def bundle(locale: str) -> Bundle | None:
    """The JSON bundle of one locale, taken along its fallback chain, with an ETag over its bytes.

    Cached per card-strings version: every write bumps it, so a warm request is one small query and a
    cache read, and no request ever sees a bundle older than the last committed change.
    """
    cache_key = f"condor:cards:bundle:{cards_version()}:{locale}"
    kept = _bundle_of_version(cache_key, locale)
    return Bundle(locale, *kept) if kept is not None else None


# A cache key names one version of one locale, whose bytes never change: this process keeps the bundles it served
# last, which saves the shared cache's round trip and unpickling the bundle on every request.
@lru_cache(maxsize=16)
def _bundle_of_version(cache_key: str, locale: str) -> tuple[bytes, str] | None:
    try:
        hit = cache.get(cache_key)
    except Exception as exc:  # any: cache backends share no error base class (redis.ConnectionError, …)
        logger.warning("card bundle cache unavailable, building %s from the database: %s", locale, exc)
        return _bundle_built(locale)
    if hit is not None:
        return (hit[0], hit[1])
    built = _bundle_built(locale)
    if built is not None:
        try:
            cache.set(cache_key, built, timeout=None)
        except Exception as exc:
            logger.warning("card bundle cache unavailable, %s not kept there: %s", locale, exc)
    return built


def bundles_forget() -> None:
    """Drop the bundles this process keeps (tests that stand for a fresh process)."""
    _bundle_of_version.cache_clear()


def _bundle_built(locale: str) -> tuple[bytes, str] | None:
    """The bundle's bytes and ETag, from the rows; None for a locale that is not a card locale."""
    locs = locales()
    if locale not in {loc.code for loc in locs}:
        return None
    chain = chains(locs)[locale]
    strings = [
        row
        for row in CardString.objects.values_list("pk", "key", "source", "source_plural")
        if not never_localize_reason(row[1])
    ]
    keys_by_pk = {pk: key for pk, key, _, _ in strings}
    texts: dict[str, dict[str, list[str]]] = {SOURCE_LOCALE: {}}
    for _, key, source, source_plural in strings:
        texts[SOURCE_LOCALE][key] = [source, source_plural] if source_plural else [source]
    translated = [c for c in chain if c != SOURCE_LOCALE]
    if translated:
        for string_id, code, forms in CardTranslation.objects.filter(
            locale__code__in=translated, ships=True
        ).values_list("string_id", "locale__code", "forms"):
            if string_id in keys_by_pk:
                texts.setdefault(code, {})[keys_by_pk[string_id]] = forms
    chosen = texts_along_chain(chain, keys_by_pk.values(), texts)
    plurals = {key: bool(source_plural) for _, key, _, source_plural in strings}
    document = bundle_document(locale, chain, plurals, chosen)
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    etag = quote_etag(hashlib.sha256(body).hexdigest()[:32])
    return (body, etag)


def _source_entries() -> tuple[list[SourceEntry], datetime]:
    """Every exportable string, and the time of the newest English change (the catalogs' creation date)."""
    strings = CardString.objects.order_by("module", "key")
    newest = strings.aggregate(newest=Max("source_changed_at"))["newest"]
    # values_list, not model instances: an export of thousands of strings is mostly row decoding.
    fields = ("key", "module", "source", "source_plural", "note", "slot", "max_chars", "value_set", "code")
    entries = [SourceEntry(*row) for row in strings.values_list(*fields) if not never_localize_reason(row[0])]
    return entries, newest or timezone.now()


def export_template() -> bytes:
    """cards.pot: every key with its English, note, slot and FHIR code; dated by the newest English change,
    so exporting twice without a change gives the same bytes."""
    entries, created = _source_entries()
    return write_template(entries, revision=created, created=created)


def export_catalogs(codes: Sequence[str]) -> dict[str, bytes]:
    """cards.pot and one .po per locale (keyed "cards.pot", "de", …), reading the strings once."""
    sources = _source_entries()
    result = {"cards.pot": write_template(sources[0], revision=sources[1], created=sources[1])}
    for code in codes:
        exported = export_locale(code, sources=sources)
        if exported is not None:
            result[code] = exported
    return result


def export_locale(code: str, *, sources: tuple[list[SourceEntry], datetime] | None = None) -> bytes | None:
    loc = CardLocale.objects.filter(code=code).first()
    if loc is None or code == SOURCE_LOCALE:
        return None
    entries, created = sources or _source_entries()
    translations = {}
    rows = CardTranslation.objects.filter(locale=loc)
    # Dated by the newest change: exporting twice without a change gives the same bytes.
    newest = rows.aggregate(newest=Max("updated_at"))["newest"]
    for key, source, plural, forms, state, same, comment, made_from in rows.values_list(
        "string__key",
        "string__source",
        "string__source_plural",
        "forms",
        "state",
        "same_as_source",
        "comment",
        "translated_from",
    ):
        forms_now = [source, plural] if plural else [source]
        translations[key] = TranslationEntry(
            key=key,
            forms=list(forms),
            state=state,
            same_as_source=same,
            comment=comment,
            previous=list(made_from) if made_from and made_from != forms_now else None,
        )
    revision = newest or created
    return write_locale(code, entries, translations, revision=revision, created=created)
