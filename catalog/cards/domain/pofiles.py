"""Gettext catalogs of card strings through Babel: the template (`cards.pot`) and one `cards.po` per locale.

Each entry is `msgctxt` = key, `msgid`/`msgid_plural` = the English, `msgstr[n]` = the locale's forms. What a
translator needs travels in the comments, so a .po stands alone in Poedit or Weblate:
  `#.` the note (where the string appears), then machine lines `condor:slot=…`, `condor:max=…`,
       `condor:fhir=<value set>#<code>`;
  `#:` the seam module's source file (card-i18n-status.ts);
  `#,` fuzzy, reviewed, same-as-source, python-brace-format;
  `#|` the English a fuzzy translation was made from; `#` the translator's own comment.
Babel reads them (its parser, every problem collected with its line), writes the header and escapes every
string; the entries are laid out as Babel lays them out. Babel only, no Django: the services turn entries into rows.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from babel import Locale
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import PoFileParser, normalize, unescape, write_po

from catalog.cards.domain.locales import SOURCE_LOCALE, babel_locale, plural_spec
from catalog.cards.domain.text import PLACEHOLDER_RE
from catalog.cards.domain.vocabulary import MODULE_BY_FILE, Module, Slot, State

DOMAIN = "cards"
PROJECT = "Condor card strings"
META = "condor:"
FLAG_REVIEWED = "reviewed"
FLAG_SAME = "same-as-source"
FLAG_FUZZY = "fuzzy"
FLAG_BRACE = "python-brace-format"
HEADER = (
    "# Card chrome of the Condor clinical assistant ({what}).\n"
    "# Clinical data and LLM-facing text are never in this catalog.\n"
    "# Exported by Condor Admin (manage.py cards_export); import with manage.py cards_import."
)


@dataclass(frozen=True)
class SourceEntry:
    """A card string as the template declares it."""

    key: str
    module: str
    source: str
    source_plural: str = ""
    note: str = ""
    slot: str = Slot.LABEL
    max_chars: int | None = None
    value_set: str = ""
    code: str = ""
    lineno: int = 0


@dataclass(frozen=True)
class TranslationEntry:
    key: str
    forms: list[str]
    state: str = State.TRANSLATED
    same_as_source: bool = False
    comment: str = ""
    # The English this translation was made from, when it differs from today's (fuzzy after a change).
    previous: list[str] | None = None
    lineno: int = 0


@dataclass
class ParsedCatalog:
    name: str
    locale: str | None  # from the header's Language; None for a template
    sources: list[SourceEntry] = field(default_factory=list)
    translations: list[TranslationEntry] = field(default_factory=list)
    # The English each entry of a locale catalog names (msgid, msgid_plural): compared with today's source.
    english: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def one_line(text: str) -> str:
    """Notes and comments are one paragraph: gettext tools wrap comment lines, so newlines cannot survive."""
    return " ".join((text or "").split())


def _catalog(locale: str | None, *, revision: datetime, created: datetime) -> Catalog:
    catalog = Catalog(
        locale=Locale.parse(babel_locale(locale)) if locale else None,
        domain=DOMAIN,
        header_comment=HEADER.format(what=f"{locale} translations" if locale else "template"),
        project=PROJECT,
        version="1",
        copyright_holder="Condor",
        msgid_bugs_address="the card-strings workspace of Condor Admin",
        creation_date=created,
        revision_date=revision,
        last_translator="Condor Admin",
        language_team=f"{locale} card translators" if locale else "",
        fuzzy=False,
    )
    return catalog


def _comments(entry: SourceEntry) -> list[str]:
    lines = [one_line(entry.note)] if entry.note.strip() else []
    lines.append(f"{META}slot={entry.slot}")
    if entry.max_chars is not None:
        lines.append(f"{META}max={entry.max_chars}")
    if entry.value_set:
        lines.append(f"{META}fhir={entry.value_set}#{entry.code}")
    return lines


def _header(locale: str | None, *, revision: datetime, created: datetime) -> str:
    """Babel writes the header (Language, Plural-Forms, dates) exactly as `pybabel` does."""
    buffer = io.BytesIO()
    write_po(buffer, _catalog(locale, revision=revision, created=created), width=0)
    return buffer.getvalue().decode("utf-8")


@lru_cache(maxsize=20000)
def _static(entry: SourceEntry) -> tuple[str, str, bool]:
    """What an entry says the same way in every locale's catalog (an export writes it ten times): the
    comments and location, the msgctxt/msgid lines, and whether it has placeholders."""
    comments = "".join(f"#. {line}\n" for line in _comments(entry)) + f"#: {Module(entry.module).source_file}\n"
    ids = f"msgctxt {normalize(entry.key, width=0)}\nmsgid {normalize(entry.source, width=0)}\n"
    if entry.source_plural:
        ids += f"msgid_plural {normalize(entry.source_plural, width=0)}\n"
    return comments, ids, bool(PLACEHOLDER_RE.search(entry.source + entry.source_plural))


def _entry(
    entry: SourceEntry,
    strings: list[str] | None,
    *,
    flags: Iterable[str] = (),
    comment: str = "",
    previous: list[str] | None = None,
) -> str:
    """One entry, laid out as Babel's writer does, with Babel's escaping (`normalize`), but comments on one
    line each: no wrapping means the note, the comment and the `#|` English come back exactly as written,
    and export stays fast (textwrap per comment line was most of its time)."""
    comments, ids, brace = _static(entry)
    out = [f"# {comment}\n" if comment else "", comments]
    flag_set = set(flags)
    if brace:
        flag_set.add(FLAG_BRACE)
    if flag_set:
        out.append("#, " + ", ".join(sorted(flag_set)) + "\n")
    if previous:
        out.append(f"#| msgid {normalize(previous[0], prefix='#| ', width=0)}\n")
        if len(previous) > 1:
            out.append(f"#| msgid_plural {normalize(previous[1], prefix='#| ', width=0)}\n")
    out.append(ids)
    if entry.source_plural:
        out += [f"msgstr[{i}] {normalize(text, width=0)}\n" for i, text in enumerate(strings or ["", ""])]
    else:
        out.append(f"msgstr {normalize((strings or [''])[0], width=0)}\n")
    out.append("\n")
    return "".join(out)


def write_template(entries: Iterable[SourceEntry], *, revision: datetime, created: datetime) -> bytes:
    parts = [_header(None, revision=revision, created=created)]
    parts += [_entry(entry, None) for entry in entries]
    return "".join(parts).encode("utf-8")


def write_locale(
    locale: str,
    entries: Iterable[SourceEntry],
    translations: Mapping[str, TranslationEntry],
    *,
    revision: datetime,
    created: datetime,
) -> bytes:
    count = plural_spec(locale).count
    parts = [_header(locale, revision=revision, created=created)]
    for entry in entries:
        tr = translations.get(entry.key)
        forms = list(tr.forms) if tr else []
        strings = (forms + [""] * count)[:count] if entry.source_plural else (forms[:1] or [""])
        if tr is None:
            parts.append(_entry(entry, strings))
            continue
        flags = []
        if tr.state == State.FUZZY:
            flags.append(FLAG_FUZZY)
        elif tr.state == State.REVIEWED:
            flags.append(FLAG_REVIEWED)
        if tr.same_as_source:
            flags.append(FLAG_SAME)
        parts.append(_entry(entry, strings, flags=flags, comment=one_line(tr.comment), previous=tr.previous))
    return "".join(parts).encode("utf-8")


class _Parser(PoFileParser):
    """Babel's parser, collecting every problem with its line instead of printing it, and keeping the raw
    msgstr[n] list (Babel pads or drops forms to the header's count; the checks need what was written)."""

    def __init__(self, catalog: Catalog) -> None:
        super().__init__(catalog, ignore_obsolete=True, abort_invalid=False)
        self.problems: list[tuple[int, str]] = []
        self.raw: dict[tuple[str | None, int], list[tuple[int, str]]] = {}
        self.seen: dict[str | None, int] = {}
        self.duplicates: list[tuple[int, str | None, int]] = []

    def _invalid_pofile(self, line: str, lineno: int, msg: str) -> None:
        if "more translations than num_plurals" in msg:
            return  # reported with the locale's own count below
        self.problems.append((lineno + 1, msg))

    def _add_message(self) -> None:
        context = self.context.denormalize() if self.context else None
        if not self.obsolete and self.messages:
            lineno = self.offset + 1
            self.raw[(context, lineno)] = sorted((i, t.denormalize()) for i, t in self.translations)
            if self.messages[0].denormalize():  # not the header
                if context in self.seen:
                    self.duplicates.append((lineno, context, self.seen[context]))
                else:
                    self.seen[context] = lineno
        super()._add_message()


_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _previous(user_comments: list[str]) -> tuple[list[str] | None, str]:
    """Split Babel's user comments into the `#|` previous msgid(s) and the translator's comment."""
    previous_lines = [c[1:].strip() for c in user_comments if c.startswith("|")]
    comment = one_line(" ".join(c for c in user_comments if not c.startswith("|")))
    if not previous_lines:
        return None, comment
    # The writer wraps long `#|` lines at spaces; joined back with one space each.
    text = " ".join(previous_lines)
    parts: list[str] = []
    for chunk in re.split(r"\b(?=msgid(?:_plural)?\s)", text):
        chunk = chunk.strip()
        if chunk.startswith("msgid"):
            parts.append("".join(unescape(f'"{m}"') for m in _QUOTED.findall(chunk)))
    return (parts or None), comment


def read_catalog(data: bytes, name: str, *, template: bool) -> ParsedCatalog:
    """Parse a .pot (template) or a locale's .po; every problem comes back with `name:line`."""
    result = ParsedCatalog(name=name, locale=None)
    catalog = Catalog(domain=DOMAIN)
    parser = _Parser(catalog)
    try:
        parser.parse(io.BytesIO(data))
    except (ValueError, UnicodeDecodeError) as exc:
        result.problems.append(f"{name}: not a readable gettext catalog ({exc})")
        return result
    result.problems += [f"{name}:{line}: {msg}" for line, msg in parser.problems]
    result.problems += [
        f"{name}:{line}: key {key} appears twice (first on line {first})" for line, key, first in parser.duplicates
    ]
    _read_language(result, catalog, template=template)
    count = plural_spec(result.locale).count if result.locale and not template else 2
    for message in catalog:
        if not message.id:
            continue  # the header
        lineno = message.lineno
        assert lineno is not None  # the parser gives every message it reads its msgid's line
        where = f"{name}:{lineno}"
        key = message.context
        if not key:
            result.problems.append(f"{where}: no msgctxt; every card string is keyed by its msgctxt")
            continue
        if isinstance(message.id, str):
            singular, plural = message.id, ""
        else:  # a plural message: (msgid, msgid_plural)
            singular, plural = message.id[0], message.id[1]
        result.english[key] = [singular, plural] if plural else [singular]
        if template:
            result.sources.append(_source_entry(message, key, singular, plural, where, result.problems))
            continue
        raw = parser.raw.get((key, lineno), [])
        forms = _forms(raw, plural=bool(plural), count=count, where=where, problems=result.problems)
        result.translations.append(_translation_entry(message, key, forms, lineno))
    return result


def _read_language(result: ParsedCatalog, catalog: Catalog, *, template: bool) -> None:
    """The header's Language: a locale's catalog must name it, a template must not name another."""
    if catalog.locale is not None:
        result.locale = str(catalog.locale).replace("_", "-")
    if not template and result.locale is None:
        result.problems.append(f"{result.name}: the header has no Language; say which locale this catalog is for")
    if template and result.locale not in (None, SOURCE_LOCALE):
        result.problems.append(f"{result.name}: a template has no Language (this one says {result.locale})")


def _translation_entry(message: Message, key: str, forms: list[str], lineno: int) -> TranslationEntry:
    """A locale catalog's entry: its state from the flags (fuzzy wins; empty is untranslated)."""
    flags = set(message.flags)
    previous, comment = _previous(list(message.user_comments))
    if FLAG_FUZZY in flags:
        state = State.FUZZY
    elif not any(f.strip() for f in forms):
        state = State.UNTRANSLATED
    elif FLAG_REVIEWED in flags:
        state = State.REVIEWED
    else:
        state = State.TRANSLATED
    return TranslationEntry(
        key=key,
        forms=forms,
        state=state,
        same_as_source=FLAG_SAME in flags,
        comment=comment,
        previous=previous,
        lineno=lineno,
    )


def _forms(raw: list[tuple[int, str]], *, plural: bool, count: int, where: str, problems: list[str]) -> list[str]:
    if not plural:
        return [raw[0][1]] if raw else [""]
    indexes = [i for i, _ in raw]
    if any(i >= count for i in indexes):
        problems.append(
            f"{where}: msgstr[{max(indexes)}]: this locale has {count} plural forms (msgstr[0] to msgstr[{count - 1}])"
        )
    forms = [""] * count
    for i, text in raw:
        if i < count:
            forms[i] = text
    return forms


def _source_entry(
    message: Message, key: str, singular: str, plural: str, where: str, problems: list[str]
) -> SourceEntry:
    locations = [loc for loc, _ in message.locations]
    modules = [MODULE_BY_FILE[loc] for loc in locations if loc in MODULE_BY_FILE]
    module = modules[0].value if len(modules) == 1 else ""
    if not module:
        problems.append(
            f"{where}: {key}: say its seam module with one location comment (#: {' or '.join(sorted(MODULE_BY_FILE))})"
        )
    note_lines, slot, max_chars, value_set, code = [], Slot.LABEL.value, None, "", ""
    for comment in message.auto_comments:
        if not comment.startswith(META):
            note_lines.append(comment)
            continue
        name, _, value = comment[len(META) :].partition("=")
        if name == "slot":
            if value not in {s.value for s in Slot}:
                problems.append(f"{where}: {key}: slot {value!r} is not one of {', '.join(s.value for s in Slot)}")
            slot = value
        elif name == "max":
            if not value.isdigit() or int(value) <= 0:
                problems.append(f"{where}: {key}: max must be a positive number of characters, not {value!r}")
            else:
                max_chars = int(value)
        elif name == "fhir":
            value_set, _, code = value.partition("#")
        else:
            problems.append(f"{where}: {key}: unknown metadata {META}{name} (slot, max or fhir)")
    return SourceEntry(
        key=key,
        module=module,
        source=singular,
        source_plural=plural,
        note=one_line(" ".join(note_lines)),
        slot=slot,
        max_chars=max_chars,
        value_set=value_set,
        code=code,
        lineno=int(where.rsplit(":", 1)[1]),
    )
