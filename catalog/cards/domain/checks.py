"""The checks that turn a translation into findings, and whether it ships.

What the checks are given are plain values (a `StringSpec`, a `LocaleSpec`, the forms as typed or stored);
what they return is `FindingData`, stored as rows by the findings service and shown by the pages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from catalog.cards.domain.keys import never_localize_reason
from catalog.cards.domain.locales import SOURCE_LOCALE, PluralSpec, language_of, plural_spec
from catalog.cards.domain.text import COUNT_PLACEHOLDER, has_words, markup, placeholders, render
from catalog.cards.domain.vocabulary import SLOT_MAX_CHARS, Check, Severity, Slot, State


@dataclass(frozen=True)
class StringSpec:
    """What the checks need to know about a card string."""

    key: str
    source: str
    source_plural: str = ""
    slot: str = Slot.LABEL
    max_chars: int | None = None

    @property
    def plural(self) -> bool:
        return bool(self.source_plural)

    @property
    def source_forms(self) -> list[str]:
        return [self.source, self.source_plural] if self.plural else [self.source]

    @property
    def placeholders(self) -> list[str]:
        return placeholders(*self.source_forms)

    def limit(self, slot_max: Mapping[str, int] = SLOT_MAX_CHARS) -> int | None:
        return self.max_chars if self.max_chars is not None else slot_max.get(self.slot)


@dataclass(frozen=True)
class LocaleSpec:
    code: str
    required: bool = False
    # A regional locale (de-AT) falls back to its parent (de): a missing text there is inherited, not missing.
    regional: bool = False

    @property
    def is_source(self) -> bool:
        return self.code == SOURCE_LOCALE

    @property
    def needs_translation(self) -> bool:
        """English variants may read like the source; every other language must differ from it."""
        return language_of(self.code) != language_of(SOURCE_LOCALE)


@dataclass(frozen=True)
class FindingData:
    check: Check
    severity: Severity
    message: str
    details: dict[str, object] = field(default_factory=dict)


def is_empty(forms: Sequence[str] | None) -> bool:
    return not forms or not any((f or "").strip() for f in forms)


def check_key(spec: StringSpec, slot_max: Mapping[str, int] = SLOT_MAX_CHARS) -> list[FindingData]:
    """Findings on the string itself, whatever the locale: the never-localize guard and the English length."""
    found = []
    reason = never_localize_reason(spec.key)
    if reason:
        found.append(
            FindingData(
                Check.NEVER_LOCALIZE,
                Severity.ERROR,
                f"{spec.key} is in a never-localize namespace ({reason}); remove it from the card strings",
                {"reason": reason},
            )
        )
    found.extend(_too_long(spec, spec.source_forms, slot_max))
    return found


def check_translation(
    spec: StringSpec,
    locale: LocaleSpec,
    forms: Sequence[str] | None,
    *,
    same_as_source: bool = False,
    slot_max: Mapping[str, int] = SLOT_MAX_CHARS,
) -> list[FindingData]:
    """Every finding on one translation (None or empty forms: no translation in this locale)."""
    if locale.is_source:
        return []
    if is_empty(forms):
        if locale.regional:
            return []  # inherited from the parent locale, which has its own findings
        severity = Severity.ERROR if locale.required else Severity.WARNING
        return [FindingData(Check.MISSING, severity, f"no {locale.code} translation", {})]
    assert forms is not None
    found: list[FindingData] = []
    plural = plural_spec(locale.code)
    if spec.plural:
        found.extend(_plural_forms(spec, plural, forms))
    elif len(forms) != 1:
        found.append(
            FindingData(
                Check.PLURAL_FORMS,
                Severity.ERROR,
                f"{spec.key} is not a plural string; give one text, not {len(forms)} forms",
                {"expected": 1, "got": len(forms)},
            )
        )
    found.extend(_placeholder_findings(spec, plural, forms))
    found.extend(_markup_findings(spec, forms))
    if locale.needs_translation and not same_as_source:
        found.extend(_same_as_source_findings(spec, locale, forms))
    found.extend(_too_long(spec, forms, slot_max))
    return found


def _same_as_source_findings(spec: StringSpec, locale: LocaleSpec, forms: Sequence[str]) -> list[FindingData]:
    """Every non-empty form reads exactly like the English (and has words to translate)."""
    source_forms = spec.source_forms
    same = [
        i
        for i, text in enumerate(forms)
        if text.strip() and has_words(text) and text.strip() == source_forms[min(i, len(source_forms) - 1)].strip()
    ]
    if not same or len(same) != len([f for f in forms if f.strip()]):
        return []
    return [
        FindingData(
            Check.SAME_AS_SOURCE,
            Severity.WARNING,
            f"the {locale.code} text is identical to the English; translate it, or mark it "
            "“same as source” if that is right",
            {},
        )
    ]


def _plural_forms(spec: StringSpec, plural: PluralSpec, forms: Sequence[str]) -> list[FindingData]:
    empty = [i for i, f in enumerate(forms) if not (f or "").strip()]
    if len(forms) == plural.count and not empty:
        return []
    labels = [plural.label(i) for i in range(plural.count)]
    if len(forms) != plural.count:
        message = (
            f"{plural.locale} has {plural.count} plural forms ({'; '.join(labels)}); this translation has {len(forms)}"
        )
    else:
        which = ", ".join(f"form {i + 1} ({labels[i]})" for i in empty)
        message = f"{which} empty: {plural.locale} needs all {plural.count} plural forms"
    return [
        FindingData(
            Check.PLURAL_FORMS,
            Severity.ERROR,
            message,
            {"expected": plural.count, "got": len(forms), "empty": empty, "labels": labels},
        )
    ]


def _placeholder_findings(spec: StringSpec, plural: PluralSpec, forms: Sequence[str]) -> list[FindingData]:
    expected = spec.placeholders
    missing: dict[str, list[int]] = {}
    extra: dict[str, list[int]] = {}
    for i, text in enumerate(forms):
        if not (text or "").strip():
            continue  # an empty form is the plural-forms check's finding
        have = set(placeholders(text))
        for name in expected:
            optional = spec.plural and name == COUNT_PLACEHOLDER and i in plural.single
            if name not in have and not optional:
                missing.setdefault(name, []).append(i)
        for name in sorted(have - set(expected)):
            extra.setdefault(name, []).append(i)
    if not missing and not extra:
        return []
    renamed = _pair_renames(list(missing), list(extra))
    parts = [f"{{{old}}} renamed to {{{new}}}" for old, new in renamed]
    paired_old = {old for old, _ in renamed}
    paired_new = {new for _, new in renamed}
    parts += [f"{{{n}}} missing" for n in missing if n not in paired_old]
    parts += [f"{{{n}}} is not in the English" for n in extra if n not in paired_new]
    return [
        FindingData(
            Check.PLACEHOLDER,
            Severity.ERROR,
            "placeholder "
            + "; ".join(parts)
            + f" (the English has {', '.join('{' + n + '}' for n in expected) or 'none'})",
            {
                "missing": [n for n in missing if n not in paired_old],
                "extra": [n for n in extra if n not in paired_new],
                "renamed": [list(pair) for pair in renamed],
                "expected": expected,
            },
        )
    ]


def _pair_renames(missing: list[str], extra: list[str]) -> list[tuple[str, str]]:
    """A placeholder missing beside an unexpected one reads as a rename ({count} → {anzahl})."""
    return list(zip(missing, extra, strict=False))


def _markup_findings(spec: StringSpec, forms: Sequence[str]) -> list[FindingData]:
    source = markup(spec.source_forms[0])
    for i, text in enumerate(forms):
        if not (text or "").strip():
            continue
        own = markup(text)
        if own != source:
            lost = sorted((source - own).elements())
            added = sorted((own - source).elements())
            parts = []
            if lost:
                parts.append("missing " + " ".join(lost))
            if added:
                parts.append("not in the English: " + " ".join(added))
            return [
                FindingData(
                    Check.MARKUP,
                    Severity.ERROR,
                    "markup differs from the English: " + "; ".join(parts),
                    {"missing": lost, "extra": added, "form": i},
                )
            ]
    return []


def _too_long(spec: StringSpec, forms: Sequence[str], slot_max: Mapping[str, int]) -> list[FindingData]:
    limit = spec.limit(slot_max)
    if limit is None:
        return []
    lengths = [len(render(text)) for text in forms]
    worst = max(lengths, default=0)
    if worst <= limit:
        return []
    return [
        FindingData(
            Check.TOO_LONG,
            Severity.WARNING,
            f"{worst} characters as rendered; the {spec.slot} slot holds {limit}",
            {"length": worst, "max": limit, "slot": str(spec.slot)},
        )
    ]


def ships(state: str, findings: Iterable[FindingData]) -> bool:
    """Whether a translation goes into the bundles. A fuzzy, untranslated or broken one (an error finding:
    a lost placeholder, missing plural forms) never reaches a doctor; the card falls back along the chain."""
    return state in (State.TRANSLATED, State.REVIEWED) and not any(f.severity == Severity.ERROR for f in findings)
