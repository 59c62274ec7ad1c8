"""Card strings, pure: locales and their plural forms, placeholders and markup, the never-localize guard,
and the checks that turn a translation into findings. No Django imports (a test enforces it).

The card chrome (titles, key/value labels, empty states, FHIR status labels, severity enums) is split in
the source into the seam modules base, status, extras and hitl. Clinical data and LLM-facing text never
pass through the seam; keys in those namespaces are refused wherever a key enters.
"""

from __future__ import annotations

import gettext
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache

from babel import Locale, UnknownLocaleError
from babel.messages.plurals import get_plural

SOURCE_LOCALE = "en"
# The clinic is German-first: these locales must be complete.
REQUIRED_LOCALES = ("en", "de")


class Module(StrEnum):
    BASE = "base"
    STATUS = "status"
    EXTRAS = "extras"
    HITL = "hitl"

    @property
    def source_file(self) -> str:
        """The source module of the seam, used as the .po location (`#: card-i18n-status.ts`)."""
        return f"card-i18n-{self.value}.ts"


MODULE_BY_FILE = {m.source_file: m for m in Module}


class State(StrEnum):
    UNTRANSLATED = "untranslated"
    FUZZY = "fuzzy"
    TRANSLATED = "translated"
    REVIEWED = "reviewed"


class Check(StrEnum):
    MISSING = "missing"
    PLACEHOLDER = "placeholder"
    PLURAL_FORMS = "plural-forms"
    MARKUP = "markup"
    SAME_AS_SOURCE = "same-as-source"
    NEVER_LOCALIZE = "never-localize"
    TOO_LONG = "too-long"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Slot(StrEnum):
    """Where on a card a string appears; each slot has a maximum length the layout can hold."""

    TITLE = "title"
    LABEL = "label"
    STATUS = "status"
    SEVERITY = "severity"
    ACTION = "action"
    EMPTY = "empty"
    MESSAGE = "message"
    HINT = "hint"


# Characters of rendered text (placeholders filled with the sample data) each slot holds before the card
# layout truncates or wraps badly. A string may carry its own, stricter or looser, maximum.
SLOT_MAX_CHARS: dict[str, int] = {
    Slot.TITLE: 40,
    Slot.LABEL: 28,
    Slot.STATUS: 24,
    Slot.SEVERITY: 16,
    Slot.ACTION: 28,
    Slot.EMPTY: 120,
    Slot.MESSAGE: 160,
    Slot.HINT: 220,
}

# Plural strings name their number {count}; a plural form used for exactly one number (German "one" is
# only n = 1) may leave it out ("Ein Medikament"), every other form must keep it.
COUNT_PLACEHOLDER = "count"

# What the checks and the preview fill placeholders with: clinical sample data, never localized.
SAMPLE_VALUES: dict[str, str] = {
    "count": "3",
    "name": "Erika Mustermann",
    "patient": "Erika Mustermann",
    "drug": "Metformin 500 mg",
    "code": "E11.9",
    "date": "2025-03-14",
    "time": "09:30",
    "minutes": "15",
    "hours": "4",
    "days": "7",
    "tool": "prescribeMedication",
    "group": "approval-escalation",
    "query": "Metformin",
    "system": "ORBIS",
    "domain": "medication",
    "value": "7.2",
    "unit": "%",
    "amount": "128.40 EUR",
    "number": "RE-2025-00417",
    "total": "12",
    "shown": "5",
    "pages": "4",
    "practitioner": "Dr. med. Jonas Weber",
    "department": "Innere Medizin",
    "insurer": "AOK Bayern",
    "substance": "Penicillin G",
    "reason": "Dose exceeds the renal limit",
}


# --- never-localize namespaces ----------------------------------------------------------------------

# Clinical data and LLM-facing text never go through the seam: a key in these namespaces is refused at
# import and in the editor, and shows a finding if the list grows after the key was stored.
NEVER_LOCALIZE_PREFIXES: dict[str, str] = {
    "clinical.": "clinical data is never localized",
    "data.": "clinical data is never localized",
    "patient.": "patient data is never localized",
    "drug.": "drug names are clinical data, never localized",
    "icd.": "ICD codes are clinical data, never localized",
    "code.": "clinical codes are never localized",
    "rag.": "LLM-facing text stays English",
    "llm.": "LLM-facing text stays English",
    "prompt.": "LLM-facing text stays English",
    "tool.": "tool text is LLM-facing and stays English",
}
NEVER_LOCALIZE_SEGMENTS: dict[str, str] = {
    "ragDescription": "ragDescription is LLM-facing and stays English",
    "ragKeywords": "ragKeywords are LLM-facing and stay English",
    "outputInstructions": "output instructions are LLM-facing and stay English",
    "instructionFragment": "instruction fragments are LLM-facing and stay English",
    "stylingFragment": "styling fragments are LLM-facing and stay English",
}

KEY_RE = re.compile(r"^[a-z][A-Za-z0-9]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)+$")


def never_localize_reason(key: str) -> str | None:
    """Why `key` may not be localized, or None when it is card chrome."""
    for prefix, reason in NEVER_LOCALIZE_PREFIXES.items():
        if key.startswith(prefix):
            return f"{prefix}* — {reason}"
    for segment in key.split("."):
        if segment in NEVER_LOCALIZE_SEGMENTS:
            return NEVER_LOCALIZE_SEGMENTS[segment]
    return None


def key_problem(key: str) -> str | None:
    """A structural problem with a key (refused at import), or None."""
    if not KEY_RE.match(key or ""):
        return f"key {key!r} is not a dotted card-string key like card.medication.title"
    reason = never_localize_reason(key)
    if reason:
        return f"key {key} is in a never-localize namespace ({reason})"
    return None


# --- locales and plural forms ----------------------------------------------------------------------


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


# --- text analysis ---------------------------------------------------------------------------------

PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
TAG_RE = re.compile(r"<\s*(/?)\s*([A-Za-z][A-Za-z0-9]*)\b([^<>]*?)\s*(/?)\s*>")
ENTITY_RE = re.compile(r"&(#[0-9]+|#x[0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);")
LETTER_RE = re.compile(r"[^\W\d_]")


def placeholders(*texts: str) -> list[str]:
    """The placeholder names of the texts, in order of first appearance."""
    found: dict[str, None] = {}
    for text in texts:
        for name in PLACEHOLDER_RE.findall(text or ""):
            found.setdefault(name, None)
    return list(found)


def markup(text: str) -> Counter[str]:
    """The HTML tags and entities of a text, normalized (case, spacing), as a multiset."""
    tokens: Counter[str] = Counter()
    for closing, name, attrs, self_closing in TAG_RE.findall(text or ""):
        attrs = " ".join(attrs.split())
        tokens[f"<{closing}{name.lower()}{(' ' + attrs) if attrs else ''}{self_closing}>"] += 1
    for entity in ENTITY_RE.findall(text or ""):
        tokens[f"&{entity};"] += 1
    return tokens


def render(text: str, values: Mapping[str, str] = SAMPLE_VALUES) -> str:
    """Fill the placeholders (unknown ones stay as written), as the card renders them."""
    return PLACEHOLDER_RE.sub(lambda m: str(values.get(m.group(1), m.group(0))), text or "")


def has_words(text: str) -> bool:
    """Whether any letters are left once placeholders and markup are removed (else nothing to translate)."""
    bare = ENTITY_RE.sub("", TAG_RE.sub("", PLACEHOLDER_RE.sub("", text or "")))
    return bool(LETTER_RE.search(bare))


# --- the checks ------------------------------------------------------------------------------------


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
        source_forms = spec.source_forms
        same = [
            i
            for i, text in enumerate(forms)
            if text.strip() and has_words(text) and text.strip() == source_forms[min(i, len(source_forms) - 1)].strip()
        ]
        if same and len(same) == len([f for f in forms if f.strip()]):
            found.append(
                FindingData(
                    Check.SAME_AS_SOURCE,
                    Severity.WARNING,
                    f"the {locale.code} text is identical to the English; translate it, or mark it "
                    "“same as source” if that is right",
                    {},
                )
            )
    found.extend(_too_long(spec, forms, slot_max))
    return found


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
