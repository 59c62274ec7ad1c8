"""Word-level diffs of two declared values, for the reviewer's eyes (the revision page, the tool page).

A reviewer must see every word an import changed in the text the model reads, so nothing is ever cut: the
segments joined on either side give back the whole old or the whole new text. Texts are compared word by word
(whitespace and punctuation kept as their own tokens, so a changed comma shows); JSON values (ragKeywords,
inputSchema, aliases) are pretty-printed with sorted keys and compared line by line, which keeps a changed keyword
or schema property on its own line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

Op = Literal["equal", "insert", "delete"]
Kind = Literal["scalar", "text", "json"]

# difflib compares every token of one side with every token of the other in the worst case (measured: 1000 words
# against a reordering of them, 1.8 s). Past this many token pairs, after the common start and end are set aside,
# the changed middle is compared line by line, and past it again shown as one deletion and one insertion: always
# the full text, only coarser. 500 x 500 tokens: under 0.1 s in the worst case measured.
PAIR_BUDGET = 250_000
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class Segment:
    op: Op
    text: str


@dataclass(frozen=True)
class FieldDiff:
    """One field's change: scalars as old → new, texts and JSON as segments."""

    kind: Kind
    old: str  # the old value as shown ("" when absent)
    new: str
    segments: tuple[Segment, ...] = ()

    @property
    def old_text(self) -> str:
        return "".join(s.text for s in self.segments if s.op != "insert")

    @property
    def new_text(self) -> str:
        return "".join(s.text for s in self.segments if s.op != "delete")


def words(text: str) -> list[str]:
    """Words, runs of whitespace and single punctuation marks; joined they give back `text`."""
    return _TOKEN.findall(text)


def lines(text: str) -> list[str]:
    """Lines with their line ends; joined they give back `text`."""
    return text.splitlines(keepends=True)


def shown(value: Any) -> str:
    """A declared value as a reviewer reads it: JSON for objects, lists and booleans, "" for absent."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return json.dumps(value)


def diff_tokens(old: list[str], new: list[str], *, lines_next: bool = True) -> list[Segment]:
    """The segments turning `old` into `new`: in each run of changes the deletion comes before the insertion,
    and whitespace between two changed words joins the change (so "a b" → "c d" reads as one replacement).

    The common start and end are equal as they stand; the middle goes to difflib within PAIR_BUDGET, else line
    by line (`lines_next`: the tokens are words), else as one replacement."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    raw: list[tuple[Op, str]] = [("equal", "".join(old[:head]))]
    if len(middle_old) * len(middle_new) <= PAIR_BUDGET:
        raw.extend(_opcodes(middle_old, middle_new))
    elif lines_next:
        coarse = diff_tokens(lines("".join(middle_old)), lines("".join(middle_new)), lines_next=False)
        raw.extend((s.op, s.text) for s in coarse)
    else:
        raw.extend([("delete", "".join(middle_old)), ("insert", "".join(middle_new))])
    raw.append(("equal", "".join(old[len(old) - tail :])))
    return _runs([(op, text) for op, text in raw if text])


def _opcodes(old: list[str], new: list[str]) -> list[tuple[Op, str]]:
    raw: list[tuple[Op, str]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            raw.append(("equal", "".join(old[i1:i2])))
            continue
        raw.append(("delete", "".join(old[i1:i2])))
        raw.append(("insert", "".join(new[j1:j2])))
    return raw


def _runs(raw: list[tuple[Op, str]]) -> list[Segment]:
    segments: list[Segment] = []
    deleted: list[str] = []
    inserted: list[str] = []

    def flush() -> None:
        if deleted:
            segments.append(Segment("delete", "".join(deleted)))
        if inserted:
            segments.append(Segment("insert", "".join(inserted)))
        deleted.clear()
        inserted.clear()

    for index, (op, text) in enumerate(raw):
        if op == "delete":
            deleted.append(text)
        elif op == "insert":
            inserted.append(text)
        elif (deleted or inserted) and not text.strip() and index + 1 < len(raw) and raw[index + 1][0] != "equal":
            deleted.append(text)  # whitespace between two changes: part of both sides of the change
            inserted.append(text)
        else:
            flush()
            segments.append(Segment("equal", text))
    flush()
    return segments


def text_diff(old: str, new: str) -> list[Segment]:
    """Word by word (line by line past PAIR_BUDGET)."""
    return diff_tokens(words(old), words(new))


def json_diff(old: str, new: str) -> list[Segment]:
    """Pretty-printed JSON, line by line."""
    return diff_tokens(lines(old), lines(new), lines_next=False)


def field_diff(old: Any, new: Any) -> FieldDiff:
    """How to show one declared field's change: objects and lists as JSON by line, strings with a space or a
    line break on either side as text by word, everything else (tiers, flags, short names) as old → new."""
    old_shown, new_shown = shown(old), shown(new)
    if isinstance(old, dict | list) or isinstance(new, dict | list):
        return FieldDiff("json", old_shown, new_shown, tuple(json_diff(old_shown, new_shown)))
    if any(isinstance(v, str) and re.search(r"\s", v) for v in (old, new)):
        return FieldDiff("text", old_shown, new_shown, tuple(text_diff(old_shown, new_shown)))
    return FieldDiff("scalar", old_shown, new_shown)
