"""The translator's matrix: the strings the filters select, and their cells in every locale (two queries
per page whatever the number of strings; the tests assert it)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from django.db.models import Exists, OuterRef, Q, QuerySet

from catalog.cards.domain.locales import SOURCE_LOCALE
from catalog.cards.domain.vocabulary import Check, Severity, State
from catalog.models import CardFinding, CardLocale, CardString, CardTranslation


@dataclass(frozen=True)
class MatrixFilters:
    locale: str = ""  # the locale the state / check / search filters look at
    module: str = ""
    state: str = ""
    check: str = ""  # a Check value, or "any"
    value_set: str = ""
    q: str = ""


def matrix_strings(filters: MatrixFilters, focus: CardLocale | None) -> QuerySet[CardString]:
    qs = CardString.objects.all()
    if filters.module:
        qs = qs.filter(module=filters.module)
    if filters.value_set:
        qs = qs.filter(value_set=filters.value_set)
    if filters.q:
        text = Q(key__icontains=filters.q) | Q(source__icontains=filters.q) | Q(source_plural__icontains=filters.q)
        if focus is not None:
            text |= Q(
                Exists(CardTranslation.objects.filter(string=OuterRef("pk"), locale=focus, forms__icontains=filters.q))
            )
        qs = qs.filter(text)
    if filters.state and focus is not None:
        if filters.state == State.UNTRANSLATED:
            done = [State.FUZZY, State.TRANSLATED, State.REVIEWED]
            qs = qs.exclude(Exists(CardTranslation.objects.filter(string=OuterRef("pk"), locale=focus, state__in=done)))
        else:
            qs = qs.filter(
                Exists(CardTranslation.objects.filter(string=OuterRef("pk"), locale=focus, state=filters.state))
            )
    if filters.check:
        findings = CardFinding.objects.filter(string=OuterRef("pk"))
        if filters.check == Check.NEVER_LOCALIZE:
            findings = findings.filter(check_name=filters.check, locale__isnull=True)
        elif filters.check == "any":
            findings = findings.filter(Q(locale=focus) | Q(locale__isnull=True)) if focus else findings
        else:
            findings = findings.filter(check_name=filters.check)
            if focus is not None:
                findings = findings.filter(locale=focus)
        qs = qs.filter(Exists(findings))
    return qs.order_by("key")


@dataclass
class Cell:
    locale: CardLocale
    translation: CardTranslation | None
    findings: list[CardFinding]
    inherited_from: str | None = None  # a regional locale without its own text shows its parent's

    @property
    def state(self) -> str:
        if self.translation is None:
            return State.UNTRANSLATED
        return self.translation.state

    @property
    def severity(self) -> str:
        if any(f.severity == Severity.ERROR for f in self.findings):
            return Severity.ERROR
        return Severity.WARNING if self.findings else ""


@dataclass
class Row:
    string: CardString
    key_findings: list[CardFinding]
    source_findings: list[CardFinding]
    cells: list[Cell]


def matrix_rows(strings: Sequence[CardString], locs: Sequence[CardLocale]) -> list[Row]:
    """The cells of these strings (one page) in every locale: two queries."""
    ids = [s.pk for s in strings]
    translations = {
        (t.string_id, t.locale_id): t
        for t in CardTranslation.objects.filter(string_id__in=ids).select_related("updated_by", "reviewed_by")
    }
    findings: dict[tuple[int, int | None], list[CardFinding]] = defaultdict(list)
    for f in CardFinding.objects.filter(string_id__in=ids):
        findings[(f.string_id, f.locale_id)].append(f)
    source = next((loc for loc in locs if loc.code == SOURCE_LOCALE), None)
    by_code = {loc.code: loc for loc in locs}
    rows = []
    for s in strings:
        cells = []
        for loc in locs:
            if loc.code == SOURCE_LOCALE:
                continue
            t = translations.get((s.pk, loc.pk))
            inherited = None
            if t is None or t.state == State.UNTRANSLATED:
                inherited = inherited_locale(loc, partial(_translation_at, translations, s.pk), by_code)
            cells.append(Cell(loc, t, findings.get((s.pk, loc.pk), []), inherited))
        rows.append(
            Row(
                s,
                findings.get((s.pk, None), []),
                findings.get((s.pk, source.pk), []) if source else [],
                cells,
            )
        )
    return rows


def _translation_at(
    translations: Mapping[tuple[int, int], CardTranslation], string_pk: int, locale_pk: int
) -> CardTranslation | None:
    return translations.get((string_pk, locale_pk))


def inherited_locale(
    loc: CardLocale, translation_in: Callable[[int], CardTranslation | None], by_code: dict[str, CardLocale]
) -> str | None:
    """Where a regional locale without its own text takes it from: the first parent whose text ships, else
    English. None for a full locale (its missing text is a finding, not an inheritance)."""
    if loc.fallback is None or loc.fallback.code == SOURCE_LOCALE:
        return None
    current: CardLocale | None = by_code.get(loc.fallback.code)
    seen: set[int] = set()
    while current is not None and current.code != SOURCE_LOCALE and current.pk not in seen:
        seen.add(current.pk)
        t = translation_in(current.pk)
        if t is not None and t.ships:
            return current.code
        current = by_code.get(current.fallback.code) if current.fallback is not None else None
    return SOURCE_LOCALE
