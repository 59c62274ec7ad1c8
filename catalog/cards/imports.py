"""Importing card strings: templates (.pot: keys, English, notes, slots, FHIR codes), locale catalogs (.po)
and frontend JSON bundles, all in one transaction. Any problem: nothing changes and every problem is listed
with its place (file:line or JSON path). Re-importing what is already there writes nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from catalog.cards.bundles import parse_bundle
from catalog.cards.domain import (
    SOURCE_LOCALE,
    State,
    is_empty,
    key_problem,
    language_of,
    normalize_locale,
    placeholders,
    plural_spec,
)
from catalog.cards.findings import base_locales_ensure, cards_version_bump, findings_refresh
from catalog.cards.pofiles import ParsedCatalog, SourceEntry, TranslationEntry, read_catalog
from catalog.cards.valuesets import value_set_problem
from catalog.core.audit import Actor, audit_record
from catalog.models import CardLocale, CardString, CardTranslation


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


@dataclass
class _LocaleBatch:
    code: str
    name: str
    entries: list[TranslationEntry]
    english: dict[str, list[str]]  # .po: the English each entry names; JSON: empty
    places: dict[str, str]  # key → where (file:line or JSON path)
    from_json: bool


def _locale_from_filename(name: str) -> str | None:
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    try:
        return normalize_locale(stem)
    except ValueError:
        return None


def _parse_files(
    files: Sequence[tuple[str, bytes]], locale: str | None, problems: list[str]
) -> tuple[list[ParsedCatalog], list[_LocaleBatch], dict[str, tuple[dict[str, tuple[list[str], str]], str]]]:
    templates: list[ParsedCatalog] = []
    batches: list[_LocaleBatch] = []
    english_json: dict[str, tuple[dict[str, tuple[list[str], str]], str]] = {}
    for name, data in files:
        kind = name.lower().rsplit(".", 1)[-1]
        if kind == "pot":
            parsed = read_catalog(data, name, template=True)
            problems += parsed.problems
            templates.append(parsed)
        elif kind == "po":
            parsed = read_catalog(data, name, template=False)
            problems += parsed.problems
            code = _code(parsed.locale or locale, name, problems, given=locale)
            if code == SOURCE_LOCALE:
                problems.append(f"{name}: en is the source; import the template (cards.pot) to change English")
            elif code:
                places = {t.key: f"{name}:{t.lineno}" for t in parsed.translations}
                batches.append(_LocaleBatch(code, name, parsed.translations, parsed.english, places, False))
        elif kind == "json":
            try:
                document = json.loads(data.decode("utf-8"))
            except UnicodeDecodeError:
                problems.append(f"{name}: not UTF-8")
                continue
            except json.JSONDecodeError as exc:
                problems.append(f"{name}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})")
                continue
            doc_locale, entries, bundle_problems = parse_bundle(document, name)
            problems += bundle_problems
            code = _code(locale or doc_locale or _locale_from_filename(name), name, problems, given=None)
            if code == SOURCE_LOCALE:
                english_json[name] = (entries, name)
            elif code:
                tr_entries = [TranslationEntry(key=k, forms=forms) for k, (forms, _) in entries.items()]
                places = {k: f"{name}: {path}" for k, (_, path) in entries.items()}
                batches.append(_LocaleBatch(code, name, tr_entries, {}, places, True))
        else:
            problems.append(f"{name}: import a .pot (the template), a .po (one locale) or a .json bundle")
    return templates, batches, english_json


def _code(raw: str | None, name: str, problems: list[str], *, given: str | None) -> str | None:
    if not raw:
        problems.append(f"{name}: which locale is this? Name it (--locale) or put it in the file")
        return None
    try:
        code = normalize_locale(raw)
    except ValueError as exc:
        problems.append(f"{name}: {exc}")
        return None
    if given and normalize_locale(given) != code:
        problems.append(f"{name}: the file says {code}, but the import was asked for {given}")
        return None
    return code


def _validate_sources(templates: list[ParsedCatalog], problems: list[str]) -> dict[str, SourceEntry]:
    declared: dict[str, SourceEntry] = {}
    where: dict[str, str] = {}
    for parsed in templates:
        for entry in parsed.sources:
            place = f"{parsed.name}:{entry.lineno}"
            problem = key_problem(entry.key)
            if problem:
                problems.append(f"{place}: refused: {problem}")
                continue
            if entry.key in declared:
                problems.append(f"{place}: {entry.key} is declared twice (also {where[entry.key]})")
                continue
            if not entry.source.strip():
                problems.append(f"{place}: {entry.key}: the English text is empty")
            if entry.value_set or entry.code:
                vs_problem = value_set_problem(entry.value_set, entry.code, entry.key)
                if vs_problem:
                    problems.append(f"{place}: {vs_problem}")
            declared[entry.key] = entry
            where[entry.key] = place
    return declared


def _target_forms(
    batch: _LocaleBatch, entry: TranslationEntry, plural: bool, place: str, problems: list[str]
) -> list[str] | None:
    count = plural_spec(batch.code).count
    forms = list(entry.forms)
    if not plural:
        if len(forms) > 1:
            problems.append(f"{place}: {entry.key} is not a plural string; give one text, not {len(forms)} forms")
            return None
        return forms
    if batch.from_json:
        if len(forms) > count:
            problems.append(
                f"{place}: {batch.code} has {count} plural forms; this entry has {len(forms)} (remove the extra)"
            )
            return None
        # Fewer forms are kept, padded: the plural-forms check then shows which are missing.
        return forms + [""] * (count - len(forms))
    return forms


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
    problems: list[str] = []
    templates, batches, english_json = _parse_files(files, locale, problems)
    declared = _validate_sources(templates, problems)
    known = base_locales_ensure()
    existing = {s.key: s for s in CardString.objects.all()}
    future_plural = {k: bool(s.source_plural) for k, s in existing.items()}
    future_plural.update({k: bool(e.source_plural) for k, e in declared.items()})
    seen_locales: dict[str, str] = {}
    for batch in batches:
        if batch.code in seen_locales:
            problems.append(
                f"{batch.name}: {batch.code} is also imported from {seen_locales[batch.code]}; one file per locale"
            )
        seen_locales[batch.code] = batch.name
        if batch.code not in known and not create_locales:
            problems.append(
                f"{batch.name}: no locale {batch.code}; add it (manage.py cards_locales --add {batch.code})"
            )
        for entry in batch.entries:
            place = batch.places.get(entry.key, batch.name)
            problem = key_problem(entry.key)
            if problem:
                problems.append(f"{place}: refused: {problem}")
            elif entry.key not in future_plural:
                problems.append(
                    f"{place}: unknown key {entry.key}: not in the card strings (import the template first)"
                )
            elif not batch.from_json and bool(len(batch.english.get(entry.key, [])) > 1) != future_plural[entry.key]:
                kind = "plural" if future_plural[entry.key] else "not plural"
                problems.append(f"{place}: {entry.key} is {kind} in the template; this entry says otherwise")
            else:
                _target_forms(batch, entry, future_plural[entry.key], place, problems)
    for name, (entries, _) in english_json.items():
        for key, (forms, path) in entries.items():
            problem = key_problem(key)
            if problem:
                problems.append(f"{name}: {path}: refused: {problem}")
            elif key not in existing and key not in declared:
                problems.append(f"{name}: {path}: unknown key {key}: new keys come with the template (cards.pot)")
            elif len(forms) != (2 if future_plural[key] else 1):
                problems.append(f"{name}: {path}: {key} needs {2 if future_plural[key] else 1} English form(s)")
    if problems:
        raise CardsImportError(_in_file_order(problems, [name for name, _ in files]))
    return _apply(declared, batches, english_json, existing, known, actor, create_locales)


_PLACE = re.compile(r"^(?P<name>[^:]+?)(?::(?P<line>\d+))?:")


def _in_file_order(problems: list[str], names: list[str]) -> list[str]:
    """Problems as a person reads them: file by file, top to bottom."""

    def place(problem: str) -> tuple[int, int]:
        m = _PLACE.match(problem)
        if m is None or m.group("name") not in names:
            return (len(names), 0)
        return (names.index(m.group("name")), int(m.group("line") or 0))

    return sorted(problems, key=place)


def _apply(
    declared: dict[str, SourceEntry],
    batches: list[_LocaleBatch],
    english_json: dict[str, tuple[dict[str, tuple[list[str], str]], str]],
    existing: dict[str, CardString],
    known: dict[str, CardLocale],
    actor: Actor,
    create_locales: bool,
) -> ImportResult:
    result = ImportResult()
    now = timezone.now()
    touched: dict[str, CardString] = {}
    source_changed_ids: list[int] = []
    new_strings: list[CardString] = []
    updated: list[CardString] = []
    english_updates = {k: forms for _, (entries, _) in english_json.items() for k, (forms, _) in entries.items()}
    for key, entry in declared.items():
        values = {
            "module": entry.module,
            "source": entry.source,
            "source_plural": entry.source_plural,
            "note": entry.note,
            "slot": entry.slot,
            "max_chars": entry.max_chars,
            "value_set": entry.value_set,
            "code": entry.code,
        }
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
    if new_strings:
        CardString.objects.bulk_create(new_strings, batch_size=1000)
        new_strings = list(CardString.objects.filter(key__in=[s.key for s in new_strings]))
    if updated:
        CardString.objects.bulk_update(
            updated,
            [
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
            ],
            batch_size=1000,
        )
    if source_changed_ids:
        # The rule: when the English changes, its translations turn fuzzy by themselves.
        result.turned_fuzzy = CardTranslation.objects.filter(
            string_id__in=source_changed_ids, state__in=[State.TRANSLATED, State.REVIEWED]
        ).update(state=State.FUZZY, ships=False, reviewed_by=None, reviewed_at=None)
    for s in new_strings + updated:
        touched[s.key] = s
    new_locales = []
    for batch in batches:
        if batch.code not in known and create_locales:
            language = language_of(batch.code)
            fallback = known[language] if language in known and language != batch.code else known[SOURCE_LOCALE]
            known[batch.code] = CardLocale.objects.create(code=batch.code, fallback=fallback)
            new_locales.append(known[batch.code])
            result.locales_added.append(batch.code)
    strings = {s.key: s for s in CardString.objects.all()} if batches else {}
    changed_pairs = _apply_translations(batches, strings, known, actor, now, result)
    # Findings: everything about new or changed strings; for the rest only the pairs that changed.
    if touched:
        findings_refresh(list(touched.values()))
    if new_locales:
        findings_refresh(
            None, list(CardLocale.objects.select_related("fallback").filter(pk__in=[x.pk for x in new_locales]))
        )
    by_locale: dict[int, list[int]] = {}
    for string_id, locale_id in changed_pairs:
        by_locale.setdefault(locale_id, []).append(string_id)
    if by_locale:
        locale_objs = {loc.pk: loc for loc in CardLocale.objects.select_related("fallback")}
        string_by_id = {s.pk: s for s in strings.values()}
        for locale_id, string_ids in by_locale.items():
            pending = [string_by_id[sid] for sid in string_ids if string_by_id[sid].key not in touched]
            if pending:
                findings_refresh(pending, [locale_objs[locale_id]])
    if result.unchanged and not result.turned_fuzzy:
        return result
    cards_version_bump()
    audit_record(
        actor=actor,
        action="cards.import",
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


def _update_string(s: CardString, values: dict[str, Any], now: Any, result: ImportResult) -> bool:
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


def _apply_translations(
    batches: list[_LocaleBatch],
    strings: dict[str, CardString],
    known: dict[str, CardLocale],
    actor: Actor,
    now: Any,
    result: ImportResult,
) -> list[tuple[int, int]]:
    """Write each batch's entries where they differ from what is stored; returns the (string, locale) pairs."""
    changed_pairs: list[tuple[int, int]] = []
    user = actor.user if actor.user is not None and actor.user.pk else None
    for batch in batches:
        loc = known[batch.code]
        stored = {t.string_id: t for t in CardTranslation.objects.filter(locale=loc)}
        inherited = (
            _inherited_texts(loc)
            if batch.from_json and loc.fallback is not None and loc.fallback.code != SOURCE_LOCALE
            else {}
        )
        counts = result.translations.setdefault(batch.code, {"added": 0, "changed": 0})
        creates: list[CardTranslation] = []
        updates: list[CardTranslation] = []
        for entry in batch.entries:
            s = strings[entry.key]
            forms = _target_forms(batch, entry, s.plural, "", []) or []
            t = stored.get(s.pk)
            desired = _desired(batch, entry, s, forms, t, inherited)
            if desired is None:
                continue
            if t is not None and all(getattr(t, k) == v for k, v in desired.items()):
                continue
            if t is None:
                t = CardTranslation(string=s, locale=loc)
                creates.append(t)
                counts["added"] += 1
            else:
                updates.append(t)
                counts["changed"] += 1
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
            changed_pairs.append((s.pk, loc.pk))
        CardTranslation.objects.bulk_create(creates, batch_size=1000)
        CardTranslation.objects.bulk_update(
            updates,
            [
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
            ],
            batch_size=1000,
        )
    return changed_pairs


def _desired(
    batch: _LocaleBatch,
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
