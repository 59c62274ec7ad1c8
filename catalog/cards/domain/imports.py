"""An import's files read and checked before anything is written: templates (.pot), locale catalogs (.po)
and frontend JSON bundles. Every problem names its place (file:line or JSON path); the import service
writes only when there is none."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from catalog.cards.domain.bundles import parse_bundle
from catalog.cards.domain.keys import key_problem
from catalog.cards.domain.locales import SOURCE_LOCALE, normalize_locale, plural_spec
from catalog.cards.domain.pofiles import ParsedCatalog, SourceEntry, TranslationEntry, read_catalog
from catalog.cards.domain.valuesets import value_set_problem

# An English bundle's entries: key → (forms, JSON path).
EnglishEntries = dict[str, tuple[list[str], str]]


@dataclass
class LocaleBatch:
    """One file's translations into one locale."""

    code: str
    name: str
    entries: list[TranslationEntry]
    english: dict[str, list[str]]  # .po: the English each entry names; JSON: empty
    places: dict[str, str]  # key → where (file:line or JSON path)
    from_json: bool


@dataclass
class ImportFiles:
    """The files of one import, read: the templates, one batch per locale file, the English bundles (by
    file name), and every problem found while reading them."""

    templates: list[ParsedCatalog] = field(default_factory=list)
    batches: list[LocaleBatch] = field(default_factory=list)
    english: dict[str, EnglishEntries] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read_files(files: Sequence[tuple[str, bytes]], locale: str | None) -> ImportFiles:
    """Read each file by its kind (.pot, .po, .json); `locale` is the one the import was asked for."""
    read = ImportFiles()
    for name, data in files:
        kind = name.lower().rsplit(".", 1)[-1]
        if kind == "pot":
            parsed = read_catalog(data, name, template=True)
            read.problems += parsed.problems
            read.templates.append(parsed)
        elif kind == "po":
            _read_po(read, name, data, locale)
        elif kind == "json":
            _read_json(read, name, data, locale)
        else:
            read.problems.append(f"{name}: import a .pot (the template), a .po (one locale) or a .json bundle")
    return read


def _read_po(read: ImportFiles, name: str, data: bytes, locale: str | None) -> None:
    parsed = read_catalog(data, name, template=False)
    read.problems += parsed.problems
    code = _code(parsed.locale or locale, name, read.problems, given=locale)
    if code == SOURCE_LOCALE:
        read.problems.append(f"{name}: en is the source; import the template (cards.pot) to change English")
    elif code:
        places = {t.key: f"{name}:{t.lineno}" for t in parsed.translations}
        read.batches.append(LocaleBatch(code, name, parsed.translations, parsed.english, places, False))


def _read_json(read: ImportFiles, name: str, data: bytes, locale: str | None) -> None:
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        read.problems.append(f"{name}: not UTF-8")
        return
    except json.JSONDecodeError as exc:
        read.problems.append(f"{name}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})")
        return
    doc_locale, entries, bundle_problems = parse_bundle(document, name)
    read.problems += bundle_problems
    # The locale asked for, else the one the bundle names, else its file name (a flat bundle names none).
    code = _code(locale or doc_locale or _locale_from_filename(name), name, read.problems, given=None)
    if code == SOURCE_LOCALE:
        read.english[name] = entries
    elif code:
        tr_entries = [TranslationEntry(key=k, forms=forms) for k, (forms, _) in entries.items()]
        places = {k: f"{name}: {path}" for k, (_, path) in entries.items()}
        read.batches.append(LocaleBatch(code, name, tr_entries, {}, places, True))


def _locale_from_filename(name: str) -> str | None:
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    try:
        return normalize_locale(stem)
    except ValueError:
        return None


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


def declared_sources(templates: list[ParsedCatalog], problems: list[str]) -> dict[str, SourceEntry]:
    """The strings the templates declare, by key; a refused or repeated key is a problem, not a string."""
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


def batch_problems(
    batches: Sequence[LocaleBatch],
    plural_after: Mapping[str, bool],
    known: Collection[str],
    *,
    create_locales: bool,
) -> list[str]:
    """What is wrong with the locale files, given whether each key is plural once this import lands
    (`plural_after`, the keys stored and declared) and the locales that exist (`known`)."""
    problems: list[str] = []
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
            _entry_problems(batch, entry, plural_after, problems)
    return problems


def _entry_problems(
    batch: LocaleBatch, entry: TranslationEntry, plural_after: Mapping[str, bool], problems: list[str]
) -> None:
    place = batch.places.get(entry.key, batch.name)
    problem = key_problem(entry.key)
    if problem:
        problems.append(f"{place}: refused: {problem}")
    elif entry.key not in plural_after:
        problems.append(f"{place}: unknown key {entry.key}: not in the card strings (import the template first)")
    elif not batch.from_json and (len(batch.english.get(entry.key, [])) > 1) != plural_after[entry.key]:
        kind = "plural" if plural_after[entry.key] else "not plural"
        problems.append(f"{place}: {entry.key} is {kind} in the template; this entry says otherwise")
    else:
        target_forms(batch, entry, plural_after[entry.key], place, problems)


def english_problems(english: Mapping[str, EnglishEntries], plural_after: Mapping[str, bool]) -> list[str]:
    """What is wrong with the English bundles: they change the English of keys that exist, never add one."""
    problems: list[str] = []
    for name, entries in english.items():
        for key, (forms, path) in entries.items():
            problem = key_problem(key)
            if problem:
                problems.append(f"{name}: {path}: refused: {problem}")
            elif key not in plural_after:
                problems.append(f"{name}: {path}: unknown key {key}: new keys come with the template (cards.pot)")
            elif len(forms) != (2 if plural_after[key] else 1):
                problems.append(f"{name}: {path}: {key} needs {2 if plural_after[key] else 1} English form(s)")
    return problems


def target_forms(
    batch: LocaleBatch, entry: TranslationEntry, plural: bool, place: str, problems: list[str]
) -> list[str] | None:
    """The forms an entry stores in its locale, or None (and a problem) when it cannot be stored."""
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


_PLACE = re.compile(r"^(?P<name>[^:]+?)(?::(?P<line>\d+))?:")


def in_file_order(problems: list[str], names: list[str]) -> list[str]:
    """Problems as a person reads them: file by file, top to bottom."""

    def place(problem: str) -> tuple[int, int]:
        m = _PLACE.match(problem)
        if m is None or m.group("name") not in names:
            return (len(names), 0)
        return (names.index(m.group("name")), int(m.group("line") or 0))

    return sorted(problems, key=place)
