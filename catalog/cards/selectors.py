"""Card-string reads: the translator's matrix, the side panel, completion, FHIR coverage, bundles and
exports. Each runs a fixed number of queries whatever the number of strings (the tests assert it)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial, reduce
from operator import or_

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from catalog.cards.bundles import resolve
from catalog.cards.domain import (
    SOURCE_LOCALE,
    Check,
    FindingData,
    Severity,
    State,
    check_translation,
    fallback_chain,
    never_localize_reason,
    plural_spec,
)
from catalog.cards.findings import locale_spec, slot_max_chars, string_spec
from catalog.cards.preview import Preview, build_preview, preview_prefixes
from catalog.cards.valuesets import CoverageRow, coverage, value_set_for_key
from catalog.models import CardFinding, CardLocale, CardString, CardTranslation


def locales() -> list[CardLocale]:
    """Source first, then the required locales, then the rest; regional ones after their parent."""
    rows = list(CardLocale.objects.select_related("fallback"))
    return sorted(rows, key=lambda loc: (loc.code != SOURCE_LOCALE, not loc.required, loc.code))


def chains(locs: Sequence[CardLocale]) -> dict[str, list[str]]:
    fallbacks = {loc.code: (loc.fallback.code if loc.fallback is not None else None) for loc in locs}
    return {loc.code: fallback_chain(loc.code, fallbacks) for loc in locs}


# --- the matrix ------------------------------------------------------------------------------------


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
                inherited = _inherited(loc, partial(_translation_at, translations, s.pk), by_code)
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


def _inherited(
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


# --- the side panel --------------------------------------------------------------------------------


@dataclass
class Panel:
    string: CardString
    locale: CardLocale
    translation: CardTranslation | None
    forms: list[str]  # what the editor shows: the draft, else the stored text (padded to the form count)
    form_labels: list[str]
    findings: list[FindingData]
    draft: bool
    same_as_source: bool
    comment: str
    preview: Preview
    refused: str | None  # never-localize: no editor
    inherited: tuple[list[str], str] | None  # a regional locale's parent text, when it has none of its own
    others: list[Cell] = field(default_factory=list)
    source_findings: list[CardFinding] = field(default_factory=list)
    value_set: object = None
    code: object = None

    @property
    def fuzzy_from(self) -> list[str] | None:
        t = self.translation
        if (
            t is not None
            and t.state == State.FUZZY
            and t.translated_from
            and t.translated_from != self.string.source_forms
        ):
            return t.translated_from
        return None


def panel(
    key: str,
    locale: str,
    locs: Sequence[CardLocale],
    *,
    draft: list[str] | None = None,
    draft_same: bool = False,
    draft_comment: str | None = None,
) -> Panel | None:
    """One string in one locale, with the checks run on the draft (if any) and the card preview."""
    string = CardString.objects.filter(key=key).first()
    by_code = {loc.code: loc for loc in locs}
    loc = by_code.get(locale)
    if string is None or loc is None:
        return None
    translations = {
        t.locale_id: t
        for t in CardTranslation.objects.filter(string=string).select_related("updated_by", "reviewed_by")
    }
    stored: dict[int | None, list[CardFinding]] = defaultdict(list)
    for f in CardFinding.objects.filter(string=string):
        stored[f.locale_id].append(f)
    t = translations.get(loc.pk)
    count = plural_spec(loc.code).count if string.plural else 1
    spec = string_spec(string)
    if draft is not None:
        forms = (list(draft) + [""] * count)[:count]
        same = draft_same
        found = check_translation(spec, locale_spec(loc), forms, same_as_source=same, slot_max=slot_max_chars())
    else:
        own = t.forms if t is not None else []
        forms = (list(own) + [""] * count)[:count]
        same = bool(t and t.same_as_source)
        found = [
            FindingData(Check(f.check_name), Severity(f.severity), f.message, f.details) for f in stored.get(loc.pk, [])
        ]
    plural = plural_spec(loc.code)
    labels = [plural.label(i) for i in range(count)] if string.plural else [""]
    inherited = None
    if t is None or t.state == State.UNTRANSLATED:
        code = _inherited(loc, translations.get, by_code)
        if code is not None:
            forms_from = translations[by_code[code].pk].forms if code != SOURCE_LOCALE else string.source_forms
            inherited = (forms_from, code)
    others = [
        Cell(other, translations.get(other.pk), stored.get(other.pk, []))
        for other in locs
        if other.code not in (SOURCE_LOCALE, loc.code)
    ]
    for cell in others:
        if cell.translation is None or cell.translation.state == State.UNTRANSLATED:
            cell.inherited_from = _inherited(cell.locale, translations.get, by_code)
    own_forms = [f for f in (t.forms if t is not None else []) if f]
    found_vs = value_set_for_key(string.key)
    return Panel(
        string=string,
        locale=loc,
        translation=t,
        forms=forms,
        form_labels=labels,
        findings=found,
        draft=draft is not None,
        same_as_source=same,
        comment=draft_comment if draft_comment is not None else (t.comment if t else ""),
        # The preview shows the edited string as typed, or as stored even when it does not ship (yet).
        preview=card_preview(
            string.key, loc.code, chains(locs)[loc.code], draft=forms if draft is not None or own_forms else None
        ),
        refused=never_localize_reason(string.key),
        inherited=inherited,
        others=others,
        source_findings=[f for f in stored.get(by_code[SOURCE_LOCALE].pk if SOURCE_LOCALE in by_code else -1, [])]
        + stored.get(None, []),
        value_set=found_vs[0] if found_vs else None,
        code=found_vs[1] if found_vs else None,
    )


def card_preview(key: str, locale: str, chain: list[str], *, draft: list[str] | None = None) -> Preview:
    """The card `key` appears on, in `locale`: two queries (the card's strings, their shipping texts)."""
    prefixes = preview_prefixes(key)
    strings = list(
        CardString.objects.filter(reduce(or_, [Q(key__startswith=p) for p in prefixes]) | Q(key=key))
        .order_by("pk")  # the order the template declares them in: the card's own field order
        .values_list("pk", "key", "source", "source_plural")
    )
    keys_by_pk = {pk: k for pk, k, _, _ in strings}
    texts: dict[str, dict[str, list[str]]] = {SOURCE_LOCALE: {}}
    for _, k, source, source_plural in strings:
        texts[SOURCE_LOCALE][k] = [source, source_plural] if source_plural else [source]
    for string_id, code, forms in CardTranslation.objects.filter(
        string_id__in=list(keys_by_pk), locale__code__in=[c for c in chain if c != SOURCE_LOCALE], ships=True
    ).values_list("string_id", "locale__code", "forms"):
        texts.setdefault(code, {})[keys_by_pk[string_id]] = forms
    resolved = resolve(chain, keys_by_pk.values(), texts)
    shown = {k: (forms, code == SOURCE_LOCALE and locale != SOURCE_LOCALE) for k, (forms, code) in resolved.items()}
    return build_preview(key=key, locale=locale, texts=shown, draft=draft)


# --- FHIR coverage ---------------------------------------------------------------------------------


def coverage_table(locs: Sequence[CardLocale]) -> list[CoverageRow]:
    """Per value set and locale: codes with a label, with only an English one, and with none (raw code)."""
    labels: dict[str, set[str]] = defaultdict(set)
    labels[SOURCE_LOCALE] = set(CardString.objects.filter(key__startswith="status.").values_list("key", flat=True))
    for code, key in CardTranslation.objects.filter(ships=True, string__key__startswith="status.").values_list(
        "locale__code", "string__key"
    ):
        labels[code].add(key)
    return coverage([loc.code for loc in locs], chains(locs), labels)
