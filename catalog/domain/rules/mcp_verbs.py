"""Reading whether an MCP tool's name, title, description or argument names say it writes (read by `mcp.py`).

A transparent heuristic, tuned on the 118 real tools of ../shared/benchmarks/mcp-tools (bench/mcp_findings.py):
a verb counts only where it is a verb, not where a read tool's text merely mentions it.

- **Names and titles** are verb-first (`create_issue`, `slack_post_message`, `git_create_branch`): the first word
  (after one naming the server) decides, so `get_post`, `list_created_files` and `medical_record_lookup` read,
  `git_create_branch` writes. German names are verb-last (`termin_loeschen`): a German infinitive anywhere.
- **Descriptions**: only present forms (`create`, `creates`; `löschen`, `löscht`) — past forms are how read tools
  mention writes ("list created files", "get deleted items", "search sent messages"). A form counts at the start of
  a clause ("Create a new issue", "Deletes the file") unless a preposition follows ("Updates on the weather"), or
  after to/will/can/and/or … when an object follows ("can create multiple nested directories", "to add new data");
  SQL's upper-case INSERT / UPDATE / DELETE / DROP count anywhere. A clause with a negation before the verb, or one
  that says read-only, never counts ("will not modify", "Do not use this tool for create, update, or delete").
- **Argument names**: a property whose first word is an unambiguous write verb (`overwrite`, `deleteAfter`,
  `sendCopyTo`); `commit_id`, `order`, `start_timestamp` are nouns there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Write verbs (base forms), English. "execute"/"run" are left to _CODE_RUN: executing a query is a read.
_EN_WRITE = (
    "create add append insert write overwrite update edit modify patch put set replace rename move delete remove "
    "drop erase purge destroy clear reset truncate send post reply forward email publish upload push commit merge "
    "fork pay charge transfer refund void book reschedule cancel order assign approve grant revoke invite sign "
    "prescribe discontinue renew record attach archive restore persist save store toggle enable disable start stop "
    "kill terminate install uninstall deploy schedule submit switch checkout unstage"
).split()

# Only these count as a property's first word: they are never a noun there (`commit_id`, `order`, `record`,
# `start_timestamp`, `set_id` are).
_PROPERTY_WRITE = frozenset(
    "create delete remove send write overwrite execute pay purge destroy drop erase insert modify upload publish "
    "transfer charge notify".split()
)

# German write verbs: infinitive and the present forms (ich/du/er, imperative). Past participles (erstellt as in
# "wann die Datei erstellt wurde") count only where an object follows, like the English -s form.
_DE_WRITE = {
    "erstellen": ("erstelle", "erstellst", "erstellt"),
    "anlegen": (),
    "löschen": ("lösche", "löschst", "löscht"),
    "loeschen": ("loesche", "loescht"),
    "entfernen": ("entferne", "entfernst", "entfernt"),
    "senden": ("sende", "sendest", "sendet"),
    "versenden": ("versende", "versendet"),
    "verschicken": ("verschicke", "verschickt"),
    "bezahlen": ("bezahle", "bezahlst", "bezahlt"),
    "zahlen": ("zahle", "zahlt"),
    "überweisen": ("überweise", "überweist"),
    "schreiben": ("schreibe", "schreibst", "schreibt"),
    "überschreiben": ("überschreibe", "überschreibt"),
    "ändern": ("ändere", "änderst", "ändert"),
    "aendern": ("aendere", "aendert"),
    "aktualisieren": ("aktualisiere", "aktualisiert"),
    "speichern": ("speichere", "speicherst", "speichert"),
    "hinzufügen": (),
    "verschieben": ("verschiebe", "verschiebt"),
    "ausführen": (),
    "buchen": ("buche", "buchst", "bucht"),
    "stornieren": ("storniere", "storniert"),
    "verordnen": ("verordne", "verordnet"),
    "unterschreiben": ("unterschreibe", "unterschreibt"),
    "signieren": ("signiere", "signiert"),
    "absagen": (),
}
_DE_INFINITIVES = frozenset(_DE_WRITE)
# Separable verbs (anlegen, hinzufügen, ausführen, absagen) list no finite forms: "lege", "führt" alone are other verbs.
_DE_FINITE = frozenset(f for forms in _DE_WRITE.values() for f in forms)


def _s_form(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_EN_BASE = frozenset(_EN_WRITE)
_EN_S = frozenset(_s_form(v) for v in _EN_WRITE)
_EN_OF_S = {_s_form(v): v for v in _EN_WRITE}

# Words after which a base form is a verb ("to create", "can create", "and delete"), and words that show an object
# follows it ("create a", "delete multiple", "sends an").
_MARKERS = frozenset(
    "to will can may must shall should would could also then and or it which that zu und oder kann wird".split()
)
_OBJECTS = frozenset(
    "a an the all any multiple one new existing specific this these those your their its each every some them it "
    "several single given specified selected ein eine einen einem einer der die das den dem des neue neuen neues "
    "alle".split()
)
_PREPOSITIONS = frozenset("on of for about from in at by with to as into over than via".split())
_NEGATIONS = frozenset(
    "not no never without cannot can't won't doesn't don't isn't nor neither nicht kein keine keinen keinem nie "
    "niemals ohne".split()
)
_READ_ONLY = re.compile(r"\bread[- ]?only\b|\bnur lesend\b|\bschreibgeschützt\b", re.IGNORECASE)
_SQL_WRITE = re.compile(r"\b(INSERT|UPDATE|DELETE|DROP|ALTER|TRUNCATE|UPSERT|CREATE TABLE|CREATE INDEX)\b")
# "execute"/"run" write only when what they run is code: a query or a search interaction is a read.
_CODE_RUN = re.compile(
    r"\b(execute|executes|run|runs)\b(?:\W+\w+){0,3}?\W+(commands?|scripts?|code|shell|programs?|processes|jobs?|"
    r"workflows?|migrations?|transactions?)\b",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"[.;:!?\n()\[\]]+")
_WORD = re.compile(r"[\wäöüÄÖÜß'$-]+,?")
_WORDS = re.compile(r"[a-zäöüß]+")


def name_verb(tokens: Iterable[str], prefix: frozenset[str] = frozenset()) -> str | None:
    """The write verb a verb-first name (or title), its lower-case words in order, begins with — after a first word
    that names the server (`git_create_branch`, `slack_post_message`); or a German infinitive anywhere. A later
    word does not count: `medical_record_lookup` names a record, it does not record one."""
    words = list(tokens)
    for w in words:
        if w in _DE_INFINITIVES:
            return w
    if len(words) > 1 and words[0] in prefix:
        words = words[1:]
    first = words[0] if words else ""
    if first in _EN_BASE:
        return first
    return _EN_OF_S.get(first)


def title_words(title: str) -> list[str]:
    return _WORDS.findall(title.lower())


def property_verb(tokens: list[str]) -> str | None:
    """The write verb a property name (its canonical-key words) starts with, if it is one of the unambiguous."""
    return tokens[0] if tokens and tokens[0] in _PROPERTY_WRITE else None


def description_verb(text: str) -> tuple[str, str] | None:
    """(verb, the clause it was read in) for the first write a description states, or None."""
    m = _CODE_RUN.search(text)
    if m and not _negated_before(text, m.start()):
        return m.group(1).lower(), _clause_around(text, m.start())
    for clause in _CLAUSES.split(text):
        found = _clause_verb(clause)
        if found:
            return found, " ".join(clause.split())[:120]
    return None


def _clause_verb(clause: str) -> str | None:
    if _READ_ONLY.search(clause):
        return None
    raw = _WORD.findall(clause)
    words = [w.rstrip(",") for w in raw]
    for i, word in enumerate(words):
        lw = word.lower()
        if lw in _NEGATIONS:
            return None  # everything after a negation in this clause is what the tool does not do
        sql = _SQL_WRITE.match(word)
        if sql and word.isupper():
            return lw
        follows = words[i + 1].lower() if i + 1 < len(words) and not raw[i].endswith(",") else ""
        if _is_write(word, lw, i, words, follows):
            return _EN_OF_S.get(lw, lw)
    return None


def _is_write(word: str, lw: str, i: int, words: list[str], follows: str) -> bool:
    before = words[i - 1].lower() if i else ""
    if lw in _EN_BASE or lw in _EN_S:
        if i == 0:
            return bool(follows) and follows not in _PREPOSITIONS
        has_object = follows in _OBJECTS
        return has_object and (lw in _EN_S or before in _MARKERS)
    if lw in _DE_INFINITIVES:
        # Nouns are capitalised in German: "vor dem Löschen" is a noun, "Termin löschen" a verb.
        return word[0].islower() or i == 0
    if lw in _DE_FINITE:
        return (i == 0 or word[0].islower()) and follows in _OBJECTS
    return False


def _negated_before(text: str, offset: int) -> bool:
    start = max(text.rfind(c, 0, offset) for c in ".;:!?\n") + 1
    clause = text[start:offset]
    return bool(_READ_ONLY.search(clause)) or any(w.lower() in _NEGATIONS for w in _WORD.findall(clause))


def _clause_around(text: str, offset: int) -> str:
    start = max(text.rfind(c, 0, offset) for c in ".;:!?\n") + 1
    ends = [i for i in (text.find(c, offset) for c in ".;:!?\n") if i >= 0]
    return " ".join(text[start : min(ends) if ends else len(text)].split())[:120]
