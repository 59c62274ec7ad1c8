"""The side panel: one string in one locale, with the checks run on a draft and the card preview."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from operator import or_

from django.db.models import Q

from catalog.cards.domain.bundles import texts_along_chain
from catalog.cards.domain.checks import FindingData, check_translation
from catalog.cards.domain.keys import never_localize_reason
from catalog.cards.domain.locales import SOURCE_LOCALE, plural_spec
from catalog.cards.domain.preview import Preview, build_preview, preview_prefixes
from catalog.cards.domain.valuesets import value_set_for_key
from catalog.cards.domain.vocabulary import Check, Severity, State
from catalog.cards.selectors.locales import chains
from catalog.cards.selectors.matrix import Cell, inherited_locale
from catalog.cards.selectors.specs import locale_spec, slot_max_chars, string_spec
from catalog.models import CardFinding, CardLocale, CardString, CardTranslation


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
    forms, same, found = _editor_state(string, loc, t, stored.get(loc.pk, []), draft, draft_same)
    own_forms = [f for f in (t.forms if t is not None else []) if f]
    found_vs = value_set_for_key(string.key)
    source_pk = by_code[SOURCE_LOCALE].pk if SOURCE_LOCALE in by_code else -1
    return Panel(
        string=string,
        locale=loc,
        translation=t,
        forms=forms,
        form_labels=_form_labels(string, loc),
        findings=found,
        draft=draft is not None,
        same_as_source=same,
        comment=draft_comment if draft_comment is not None else (t.comment if t else ""),
        # The preview shows the edited string as typed, or as stored even when it does not ship (yet).
        preview=card_preview(
            string.key, loc.code, chains(locs)[loc.code], draft=forms if draft is not None or own_forms else None
        ),
        refused=never_localize_reason(string.key),
        inherited=_inherited_text(string, loc, t, translations, by_code),
        others=_other_cells(loc, locs, translations, stored, by_code),
        source_findings=list(stored.get(source_pk, [])) + stored.get(None, []),
        value_set=found_vs[0] if found_vs else None,
        code=found_vs[1] if found_vs else None,
    )


def _editor_state(
    string: CardString,
    loc: CardLocale,
    t: CardTranslation | None,
    stored: list[CardFinding],
    draft: list[str] | None,
    draft_same: bool,
) -> tuple[list[str], bool, list[FindingData]]:
    """What the editor shows (padded to the locale's number of forms), its same-as-source mark, and its
    findings: the checks run on the draft, else the stored findings."""
    count = plural_spec(loc.code).count if string.plural else 1
    if draft is not None:
        forms = (list(draft) + [""] * count)[:count]
        spec = string_spec(string)
        found = check_translation(spec, locale_spec(loc), forms, same_as_source=draft_same, slot_max=slot_max_chars())
        return forms, draft_same, found
    own = t.forms if t is not None else []
    forms = (list(own) + [""] * count)[:count]
    found = [FindingData(Check(f.check_name), Severity(f.severity), f.message, f.details) for f in stored]
    return forms, bool(t and t.same_as_source), found


def _form_labels(string: CardString, loc: CardLocale) -> list[str]:
    """Which numbers each plural form is for (`n = 1`), so a translator knows which box is which."""
    if not string.plural:
        return [""]
    plural = plural_spec(loc.code)
    return [plural.label(i) for i in range(plural.count)]


def _inherited_text(
    string: CardString,
    loc: CardLocale,
    t: CardTranslation | None,
    translations: Mapping[int, CardTranslation],
    by_code: dict[str, CardLocale],
) -> tuple[list[str], str] | None:
    """The text a locale without its own shows, and whose it is (a regional locale's parent, or English)."""
    if t is not None and t.state != State.UNTRANSLATED:
        return None
    code = inherited_locale(loc, translations.get, by_code)
    if code is None:
        return None
    forms_from = translations[by_code[code].pk].forms if code != SOURCE_LOCALE else string.source_forms
    return (forms_from, code)


def _other_cells(
    loc: CardLocale,
    locs: Sequence[CardLocale],
    translations: Mapping[int, CardTranslation],
    stored: Mapping[int | None, list[CardFinding]],
    by_code: dict[str, CardLocale],
) -> list[Cell]:
    """The same string in every other translated locale, for the panel's overview."""
    others = [
        Cell(other, translations.get(other.pk), stored.get(other.pk, []))
        for other in locs
        if other.code not in (SOURCE_LOCALE, loc.code)
    ]
    for cell in others:
        if cell.translation is None or cell.translation.state == State.UNTRANSLATED:
            cell.inherited_from = inherited_locale(cell.locale, translations.get, by_code)
    return others


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
    chosen = texts_along_chain(chain, keys_by_pk.values(), texts)
    shown = {k: (forms, code == SOURCE_LOCALE and locale != SOURCE_LOCALE) for k, (forms, code) in chosen.items()}
    return build_preview(key=key, locale=locale, texts=shown, draft=draft)
