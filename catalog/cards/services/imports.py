"""Importing card strings: templates (.pot: keys, English, notes, slots, FHIR codes), locale catalogs (.po)
and frontend JSON bundles, all in one transaction. The files are read and checked by the pure
`catalog.cards.domain.imports`; any problem: nothing changes and every problem is listed with its place
(file:line or JSON path). Re-importing what is already there writes nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from catalog.cards.domain.checks import is_empty
from catalog.cards.domain.imports import (
    EnglishEntries,
    ImportFiles,
    LocaleBatch,
    batch_problems,
    declared_sources,
    english_problems,
    in_file_order,
    read_files,
    target_forms,
)
from catalog.cards.domain.locales import SOURCE_LOCALE, language_of
from catalog.cards.domain.pofiles import SourceEntry, TranslationEntry
from catalog.cards.domain.text import placeholders
from catalog.cards.domain.vocabulary import State
from catalog.cards.services.findings import base_locales_ensure, cards_version_bump, findings_refresh
from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.models import CardLocale, CardString, CardTranslation

_STRING_FIELDS = [
    "module",
    "source",
    "source_plural",
    "note",
    "placeholders",
    "slot",
    "max_chars",
    "value_set",
    "code",
    "source_changed_at",
]
_TRANSLATION_FIELDS = [
    "forms",
    "state",
    "same_as_source",
    "comment",
    "translated_from",
    "ships",
    "updated_by",
    "updated_at",
    "reviewed_by",
    "reviewed_at",
]


class CardsImportError(Exception):
    """An import with problems: nothing was changed; each problem names its place (file:line, JSON path)."""

    def __init__(self, problems: list[str]):
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


@dataclass
class ImportResult:
    strings_added: list[str] = field(default_factory=list)
    strings_changed: list[str] = field(default_factory=list)  # metadata or English changed
    source_changed: list[str] = field(default_factory=list)  # English changed: translations turned fuzzy
    turned_fuzzy: int = 0
    translations: dict[str, dict[str, int]] = field(default_factory=dict)  # locale → added / changed
    locales_added: list[str] = field(default_factory=list)

    @property
    def unchanged(self) -> bool:
        return not (
            self.strings_added
            or self.strings_changed
            or self.locales_added
            or any(sum(c.values()) for c in self.translations.values())
        )

    def summary(self) -> str:
        if self.unchanged:
            return "card strings: nothing changed"
        parts = [f"card strings: {len(self.strings_added)} added, {len(self.strings_changed)} changed"]
        if self.source_changed:
            parts.append(
                f"English changed for {len(self.source_changed)}: {self.turned_fuzzy} translation(s) now fuzzy"
            )
        for code, counts in sorted(self.translations.items()):
            parts.append(f"{code}: {counts.get('added', 0)} added, {counts.get('changed', 0)} changed")
        if self.locales_added:
            parts.append(f"locales added: {', '.join(self.locales_added)}")
        return "; ".join(parts)


@transaction.atomic
def cards_import(
    *,
    files: Sequence[tuple[str, bytes]],
    actor: Actor,
    locale: str | None = None,
    create_locales: bool = False,
) -> ImportResult:
    """Import templates (.pot: keys, English, notes, slots, FHIR codes), locale catalogs (.po) and frontend
    JSON bundles in one transaction. Any problem: CardsImportError listing all of them; nothing changed.
    Re-importing what is already there writes nothing."""
    read = read_files(files, locale)
    problems = read.problems
    declared = declared_sources(read.templates, problems)
    known = base_locales_ensure()
    existing = {s.key: s for s in CardString.objects.all()}
    # Whether each key is plural once this import lands: what the template declares, else what is stored.
    plural_after = {k: bool(s.source_plural) for k, s in existing.items()}
    plural_after.update({k: bool(e.source_plural) for k, e in declared.items()})
    problems += batch_problems(read.batches, plural_after, known, create_locales=create_locales)
    problems += english_problems(read.english, plural_after)
    if problems:
        raise CardsImportError(in_file_order(problems, [name for name, _ in files]))
    return _apply(declared, read, existing, known, actor, create_locales)


def _apply(
    declared: dict[str, SourceEntry],
    read: ImportFiles,
    existing: dict[str, CardString],
    known: dict[str, CardLocale],
    actor: Actor,
    create_locales: bool,
) -> ImportResult:
    """Write what differs from what is stored, then the findings of what changed, the card-strings version
    and the audit event (none of the three when nothing changed)."""
    result = ImportResult()
    now = timezone.now()
    touched, source_changed_ids = _strings_write(declared, read.english, existing, now, result)
    if source_changed_ids:
        result.turned_fuzzy = _fuzzy_after_english_change(source_changed_ids)
    new_locales = _locales_create(read.batches, known, create_locales, result)
    strings = {s.key: s for s in CardString.objects.all()} if read.batches else {}
    changed_pairs = _translations_write(read.batches, strings, known, actor, now, result)
    _findings_after_import(touched, new_locales, changed_pairs, strings)
    if result.unchanged and not result.turned_fuzzy:
        return result
    cards_version_bump()
    audit_record(
        actor=actor,
        action=AuditAction.CARDS_IMPORT,
        object_type="cards.catalog",
        object_id="cards",
        after={
            "strings_added": result.strings_added,
            "strings_changed": result.strings_changed,
            "source_changed": result.source_changed,
            "turned_fuzzy": result.turned_fuzzy,
            "translations": result.translations,
            "locales_added": result.locales_added,
        },
    )
    return result


# --- strings ---------------------------------------------------------------------------------------


def _strings_write(
    declared: dict[str, SourceEntry],
    english: Mapping[str, EnglishEntries],
    existing: dict[str, CardString],
    now: datetime,
    result: ImportResult,
) -> tuple[dict[str, CardString], list[int]]:
    """Create and update the strings; returns the ones written (by key) and the ids whose English changed."""
    new_strings, updated, source_changed_ids = _string_changes(declared, english, existing, now, result)
    if new_strings:
        CardString.objects.bulk_create(new_strings, batch_size=1000)
        new_strings = list(CardString.objects.filter(key__in=[s.key for s in new_strings]))
    if updated:
        CardString.objects.bulk_update(updated, _STRING_FIELDS, batch_size=1000)
    return {s.key: s for s in new_strings + updated}, source_changed_ids


def _string_changes(
    declared: dict[str, SourceEntry],
    english: Mapping[str, EnglishEntries],
    existing: dict[str, CardString],
    now: datetime,
    result: ImportResult,
) -> tuple[list[CardString], list[CardString], list[int]]:
    """The strings to create and to update (changed in memory), and the ids whose English changed. An English
    bundle's text wins over the template's for the same key."""
    new_strings: list[CardString] = []
    updated: list[CardString] = []
    source_changed_ids: list[int] = []
    english_updates = {k: forms for entries in english.values() for k, (forms, _) in entries.items()}
    for key, entry in declared.items():
        values = _declared_values(entry)
        if key in english_updates:
            forms = english_updates.pop(key)
            values["source"], values["source_plural"] = forms[0], (forms[1] if len(forms) > 1 else "")
        s = existing.get(key)
        if s is None:
            s = CardString(key=key, created_at=now, source_changed_at=now, **values)
            s.placeholders = placeholders(s.source, s.source_plural)
            new_strings.append(s)
            result.strings_added.append(key)
            continue
        if _update_string(s, values, now, result):
            updated.append(s)
            if key in result.source_changed:
                source_changed_ids.append(s.pk)
    for key, forms in english_updates.items():
        s = existing[key]
        values = {"source": forms[0], "source_plural": forms[1] if len(forms) > 1 else ""}
        if _update_string(s, values, now, result):
            updated.append(s)
            source_changed_ids.append(s.pk)
    return new_strings, updated, source_changed_ids


def _declared_values(entry: SourceEntry) -> dict[str, Any]:
    return {
        "module": entry.module,
        "source": entry.source,
        "source_plural": entry.source_plural,
        "note": entry.note,
        "slot": entry.slot,
        "max_chars": entry.max_chars,
        "value_set": entry.value_set,
        "code": entry.code,
    }


def _update_string(s: CardString, values: dict[str, Any], now: datetime, result: ImportResult) -> bool:
    changed = False
    source_changed = False
    for name, value in values.items():
        if getattr(s, name) != value:
            setattr(s, name, value)
            changed = True
            source_changed = source_changed or name in ("source", "source_plural")
    if source_changed:
        s.source_changed_at = now
        s.placeholders = placeholders(s.source, s.source_plural)
        result.source_changed.append(s.key)
    if changed:
        result.strings_changed.append(s.key)
    return changed


def _fuzzy_after_english_change(string_ids: list[int]) -> int:
    # The rule: when the English changes, its translations turn fuzzy by themselves.
    return CardTranslation.objects.filter(
        string_id__in=string_ids, state__in=[State.TRANSLATED, State.REVIEWED]
    ).update(state=State.FUZZY, ships=False, reviewed_by=None, reviewed_at=None)


# --- locales and translations ----------------------------------------------------------------------


def _locales_create(
    batches: Sequence[LocaleBatch], known: dict[str, CardLocale], create_locales: bool, result: ImportResult
) -> list[CardLocale]:
    """With --create-locales: the locales the files name but we lack, falling back to their language."""
    new_locales = []
    for batch in batches:
        if batch.code not in known and create_locales:
            language = language_of(batch.code)
            fallback = known[language] if language in known and language != batch.code else known[SOURCE_LOCALE]
            known[batch.code] = CardLocale.objects.create(code=batch.code, fallback=fallback)
            new_locales.append(known[batch.code])
            result.locales_added.append(batch.code)
    return new_locales


def _translations_write(
    batches: Sequence[LocaleBatch],
    strings: dict[str, CardString],
    known: dict[str, CardLocale],
    actor: Actor,
    now: datetime,
    result: ImportResult,
) -> list[tuple[int, int]]:
    """Write each batch's entries where they differ from what is stored; returns the (string, locale) pairs."""
    changed_pairs: list[tuple[int, int]] = []
    user = actor.user if actor.user is not None and actor.user.pk else None
    for batch in batches:
        counts = result.translations.setdefault(batch.code, {"added": 0, "changed": 0})
        changed_pairs += _batch_write(batch, strings, known[batch.code], user, now, counts)
    return changed_pairs


def _batch_write(
    batch: LocaleBatch,
    strings: dict[str, CardString],
    loc: CardLocale,
    user: User | None,
    now: datetime,
    counts: dict[str, int],
) -> list[tuple[int, int]]:
    stored = {t.string_id: t for t in CardTranslation.objects.filter(locale=loc)}
    inherited = (
        _inherited_texts(loc)
        if batch.from_json and loc.fallback is not None and loc.fallback.code != SOURCE_LOCALE
        else {}
    )
    creates: list[CardTranslation] = []
    updates: list[CardTranslation] = []
    pairs: list[tuple[int, int]] = []
    for entry in batch.entries:
        s = strings[entry.key]
        forms = target_forms(batch, entry, s.plural, "", []) or []
        t = stored.get(s.pk)
        desired = _desired(batch, entry, s, forms, t, inherited)
        if desired is None or (t is not None and all(getattr(t, k) == v for k, v in desired.items())):
            continue
        if t is None:
            t = CardTranslation(string=s, locale=loc)
            creates.append(t)
            counts["added"] += 1
        else:
            updates.append(t)
            counts["changed"] += 1
        _translation_set(t, desired, user, now)
        pairs.append((s.pk, loc.pk))
    CardTranslation.objects.bulk_create(creates, batch_size=1000)
    CardTranslation.objects.bulk_update(updates, _TRANSLATION_FIELDS, batch_size=1000)
    return pairs


def _translation_set(t: CardTranslation, desired: dict[str, Any], user: User | None, now: datetime) -> None:
    was_reviewed = t.state == State.REVIEWED
    for k, v in desired.items():
        setattr(t, k, v)
    t.updated_by = user
    t.updated_at = now
    if t.state == State.REVIEWED:
        if not was_reviewed:
            t.reviewed_by, t.reviewed_at = None, now  # reviewed elsewhere: the file says so
    else:
        t.reviewed_by, t.reviewed_at = None, None
    t.ships = False  # recomputed with the findings


def _desired(
    batch: LocaleBatch,
    entry: TranslationEntry,
    s: CardString,
    forms: list[str],
    t: CardTranslation | None,
    inherited: dict[int, list[str]],
) -> dict[str, Any] | None:
    """What the stored translation should be after this entry, or None to leave it as it is."""
    current = s.source_forms
    if is_empty(forms):
        # An empty entry says "not translated here": it never wipes a stored text.
        if t is not None and t.state != State.UNTRANSLATED:
            return None
        if t is None and not entry.comment:
            return None
        return {
            "forms": [],
            "state": State.UNTRANSLATED,
            "same_as_source": False,
            "comment": entry.comment,
            "translated_from": [],
        }
    if batch.from_json:
        if t is not None and t.forms == forms:
            return None  # a bundle has no state: the same text keeps its state and review
        if t is None and inherited.get(s.pk) == forms:
            return None  # a regional bundle repeats its parent's text: inherited, not an override
        return {
            "forms": forms,
            "state": State.TRANSLATED,
            "same_as_source": t.same_as_source if t else False,
            "comment": t.comment if t else "",
            "translated_from": current,
        }
    english = batch.english.get(entry.key, current)
    state = entry.state
    translated_from = entry.previous if (state == State.FUZZY and entry.previous) else english
    if english != current:
        # Made from an English that has changed since: fuzzy until a translator confirms it.
        state = State.FUZZY
    return {
        "forms": forms,
        "state": state,
        "same_as_source": entry.same_as_source,
        "comment": entry.comment,
        "translated_from": translated_from,
    }


def _inherited_texts(loc: CardLocale) -> dict[int, list[str]]:
    """The shipping texts a regional locale inherits from its parent (one level: de-AT ← de)."""
    return dict(CardTranslation.objects.filter(locale_id=loc.fallback_id, ships=True).values_list("string_id", "forms"))


# --- findings --------------------------------------------------------------------------------------


def _findings_after_import(
    touched: dict[str, CardString],
    new_locales: list[CardLocale],
    changed_pairs: list[tuple[int, int]],
    strings: dict[str, CardString],
) -> None:
    """Findings: everything about new or changed strings and new locales; for the rest only the pairs that
    changed."""
    if touched:
        findings_refresh(list(touched.values()))
    if new_locales:
        findings_refresh(
            None, list(CardLocale.objects.select_related("fallback").filter(pk__in=[x.pk for x in new_locales]))
        )
    by_locale: dict[int, list[int]] = {}
    for string_id, locale_id in changed_pairs:
        by_locale.setdefault(locale_id, []).append(string_id)
    if not by_locale:
        return
    locale_objs = {loc.pk: loc for loc in CardLocale.objects.select_related("fallback")}
    string_by_id = {s.pk: s for s in strings.values()}
    for locale_id, string_ids in by_locale.items():
        pending = [string_by_id[sid] for sid in string_ids if string_by_id[sid].key not in touched]
        if pending:
            findings_refresh(pending, [locale_objs[locale_id]])
