"""The console UI is complete in German: every UI string extracted by Babel has a checked translation."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from django.test import Client
from django.utils import translation

ROOT = Path(__file__).resolve().parent.parent
KEYWORDS = {
    "_": None,
    "gettext": None,
    "gettext_lazy": None,
    "ngettext": (1, 2),
    "ngettext_lazy": (1, 2),
    "pgettext": ((1, "c"), 2),
    "npgettext": ((1, "c"), 2, 3),
    "N_": None,  # catalog.domain.messages: a sentence kept as its template, translated when a page shows it
}


def extracted() -> Catalog:
    """What `make messages` extracts: Python sources and templates (through our Babel extractor)."""
    method_map = [
        ("condor_admin/**.py", "python"),
        ("catalog/**.py", "python"),
        ("approvals/**.py", "python"),
        ("templates/**.html", "condor_admin.babel_extract:extract_django"),
    ]
    catalog = Catalog()
    for _, _lineno, message, comments, context in extract_from_dir(
        str(ROOT), method_map, keywords=KEYWORDS, comment_tags=()
    ):
        catalog.add(message, None, [], auto_comments=comments, context=context)
    return catalog


def german() -> Catalog:
    with open(ROOT / "locale/de/LC_MESSAGES/django.po", "rb") as f:
        return read_po(f, locale="de")


def test_templates_are_extracted() -> None:
    ids = {m.id if isinstance(m.id, str) else m.id[0] for m in extracted() if m.id}
    assert {"Dashboard", "Who owns this tool?", "Sign off this revision", "at most %(days)s days ahead"} <= ids


def test_every_ui_string_has_a_german_translation() -> None:
    de = german()
    untranslated = []
    for message in extracted():
        if not message.id:
            continue
        translated = de.get(message.id, context=message.context)
        strings = [] if translated is None else translated.string
        strings = [strings] if isinstance(strings, str) else list(strings)
        if translated is None or not all(strings) or translated.fuzzy:
            untranslated.append(message.id)
    assert untranslated == [], "run `make messages` and translate these in locale/de/LC_MESSAGES/django.po"


def test_german_translations_keep_their_placeholders_and_plural_forms() -> None:
    de = german()
    assert de.num_plurals == 2
    problems = [(m.id, [str(e) for e in errors]) for m, errors in de.check()]
    assert problems == []


# A placeholder (`%(tool)s`, `%d`) as Python's %-formatting and Babel write it.
_PLACEHOLDER = re.compile(r"%(?:\(\w+\))?[sdif]")
# A sentence end glued to the next sentence: "(Vier-Augen-Prinzip).Sie haben …".
_GLUED_SENTENCE = re.compile(r"[.!?][A-ZÄÖÜ]")
# Clauses long enough that one appearing twice in a translation is a pasting slip, not a figure of speech.
_CLAUSE = re.compile(r"(?<=[.!?;:])\s+")


def _pasting_slips(msgid: str | Sequence[str], msgstr: str) -> list[str]:
    """What looks like a translation pasted twice or glued to the next sentence (a .po editor's slip that
    `Catalog.check` cannot see: it compares placeholders as a set, not how often each appears)."""
    slips = []
    most = Counter[str]()
    for form in [msgid] if isinstance(msgid, str) else msgid:
        most |= Counter(_PLACEHOLDER.findall(form))
    extra = Counter(_PLACEHOLDER.findall(msgstr)) - most
    if extra:
        slips.append(f"placeholders more often than in the English: {sorted(extra)}")
    if _GLUED_SENTENCE.search(msgstr):
        slips.append(f"no space after a sentence end: {_GLUED_SENTENCE.findall(msgstr)}")
    clauses = Counter(c.strip() for c in _CLAUSE.split(msgstr) if len(c.strip()) >= 20)
    slips += [f"said twice: {clause!r}" for clause, n in clauses.items() if n > 1]
    return slips


def test_german_translations_say_each_sentence_once() -> None:
    problems = []
    for message in german():
        strings = [message.string] if isinstance(message.string, str) else list(message.string or ())
        for msgstr in filter(None, strings):
            problems += [(message.id, slip) for slip in _pasting_slips(message.id, msgstr)]
    assert problems == [], "fix these translations in locale/de/LC_MESSAGES/django.po, then `make compilemessages`"


def test_a_translation_pasted_twice_is_seen() -> None:
    english = "%(tool)s ran twice; check what was written"
    twice = "%(tool)s lief zweimal; prüfen Sie, was geschrieben wurde"
    assert _pasting_slips(english, twice + twice)  # glued without a sentence end: the placeholders tell
    assert _pasting_slips("Done.", "Erledigt.Erledigt.")
    assert _pasting_slips("One. Two.", "Ein langer erster Satz. Ein langer erster Satz.")
    assert _pasting_slips(("%(n)s tool", "%(n)s tools"), "dieses eine Tool") == []  # a singular may drop %(n)s
    assert _pasting_slips(english, twice) == []


def test_the_compiled_catalog_is_current(settings: Any) -> None:
    """`make run`/`make test` compile the .po; the .mo Django reads must hold every translation."""
    mo = ROOT / "locale/de/LC_MESSAGES/django.mo"
    with open(mo, "rb") as f:
        compiled = read_mo(f)

    def ids(catalog: Catalog) -> set[str]:
        return {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id and m.string}

    assert ids(german()) <= ids(compiled)
    with translation.override("de"):
        assert translation.gettext("Dashboard") == "Übersicht"


@pytest.mark.django_db
def test_accept_language_and_the_per_user_choice(make_user: Any) -> None:
    client = Client()
    client.force_login(make_user("oscar", "on-call"))
    assert "<h1>Übersicht</h1>" in client.get("/", headers={"Accept-Language": "de"}).content.decode()
    assert "<h1>Dashboard</h1>" in client.get("/", headers={"Accept-Language": "en"}).content.decode()
    # The person's own choice wins over the browser, in this session and the next.
    client.post("/language", {"language": "de", "next": "/teams/"})
    assert "<h1>Teams</h1>" in client.get("/teams/", headers={"Accept-Language": "en"}).content.decode()
    assert "Übersicht" in client.get("/", headers={"Accept-Language": "en"}).content.decode()
    again = Client()
    again.force_login(make_user("oscar2", "on-call"))
    assert "<h1>Dashboard</h1>" in again.get("/", headers={"Accept-Language": "en"}).content.decode()
    fresh_session = Client()
    from django.contrib.auth import get_user_model

    fresh_session.force_login(get_user_model().objects.get(username="oscar"))
    assert "<h1>Übersicht</h1>" in fresh_session.get("/", headers={"Accept-Language": "en"}).content.decode()


@pytest.mark.django_db
def test_language_switch_refuses_unknown_languages_and_foreign_redirects(make_user: Any) -> None:
    client = Client()
    client.force_login(make_user("oscar", "on-call"))
    assert client.post("/language", {"language": "xx"}).status_code == 400
    response = client.post("/language", {"language": "en", "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/"
