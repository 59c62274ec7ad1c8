"""Card bundles: a locale's texts taken along its fallback chain, the JSON document the web frontend
loads, and reading a frontend bundle back (our own, flat or nested)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from catalog.cards.domain.locales import SOURCE_LOCALE, PluralSpec, plural_spec

BUNDLE_FORMAT = "condor-cards/v1"


def texts_along_chain(
    chain: Sequence[str],
    keys: Iterable[str],
    texts: Mapping[str, Mapping[str, list[str]]],
) -> dict[str, tuple[list[str], str]]:
    """For each key the forms of the first locale in the chain that has them, and which locale that was.

    `texts[locale][key]` are shipping forms; the source locale must hold every key.
    """
    chosen: dict[str, tuple[list[str], str]] = {}
    layers = [(code, texts.get(code, {})) for code in chain]
    for key in keys:
        for code, layer in layers:
            forms = layer.get(key)
            if forms:
                chosen[key] = (forms, code)
                break
    return chosen


def bundle_document(
    locale: str, chain: Sequence[str], plurals: Mapping[str, bool], chosen: Mapping[str, tuple[list[str], str]]
) -> dict[str, object]:
    """The JSON bundle the web frontend loads: plural strings as lists in gettext form order."""
    spec = plural_spec(locale)
    strings: dict[str, object] = {}
    for key in sorted(chosen):
        forms, code = chosen[key]
        if plurals.get(key):
            # An English fallback has the two English forms; pad to the locale's count so the index
            # the frontend computes always lands on a form.
            if code == SOURCE_LOCALE and spec.count != 2:
                forms = _english_forms_for(spec, forms)
            strings[key] = list(forms)
        else:
            strings[key] = forms[0]
    return {
        "format": BUNDLE_FORMAT,
        "locale": locale,
        "fallbacks": list(chain[1:]),
        "plural": {"forms": spec.count, "expr": spec.expr},
        "strings": strings,
    }


def _english_forms_for(spec: PluralSpec, forms: Sequence[str]) -> list[str]:
    one, other = forms[0], forms[-1]
    return [one if spec.samples[i] == (1,) else other for i in range(spec.count)]


def parse_bundle(document: object, name: str) -> tuple[str | None, dict[str, tuple[list[str], str]], list[str]]:
    """A frontend JSON bundle → (its locale if it names one, key → (forms, JSON path), problems with their path).

    Accepts our own bundles ({"strings": {...}}), a flat {key: text} mapping and nested objects whose
    paths are the keys ({"card": {"medication": {"title": "…"}}}); plural forms are lists.
    """
    problems: list[str] = []
    locale: str | None = None
    body: object = document
    prefix = "$"
    if isinstance(document, dict) and "strings" in document:
        fmt = document.get("format")
        if fmt is not None and fmt != BUNDLE_FORMAT:
            problems.append(f"{name}: $.format: expected {BUNDLE_FORMAT!r}, got {fmt!r}")
        raw_locale = document.get("locale")
        if raw_locale is not None and not isinstance(raw_locale, str):
            problems.append(f"{name}: $.locale: expected a language code")
        else:
            locale = raw_locale
        body = document["strings"]
        prefix = "$.strings"
    if not isinstance(body, dict):
        return locale, {}, problems + [f"{name}: {prefix}: expected an object of card strings"]
    entries: dict[str, tuple[list[str], str]] = {}

    def walk(node: dict[str, object], path: str, key_prefix: str) -> None:
        for part, value in node.items():
            key = f"{key_prefix}.{part}" if key_prefix else part
            where = f'{path}["{part}"]'
            if isinstance(value, dict):
                walk(value, where, key)
            elif isinstance(value, str):
                entries[key] = ([value], where)
            elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                entries[key] = (list(value), where)
            else:
                problems.append(f"{name}: {where}: expected a string, a list of plural forms or an object")

    walk(body, prefix, "")
    return locale, entries, problems
