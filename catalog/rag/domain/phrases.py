"""A tool's phrases: the short texts embedded one by one beside its whole text (catalog/rag/README.md, "Signals").

A whole-text vector averages a tool's description with every keyword, so one distinct keyword ("Blutdruckverlauf")
weighs little in it. Each keyword and each description sentence gets a vector of its own, and the tool scores by
its best one. The `DO NOT USE WHEN` line says what the tool is *not* for: it is a negative phrase, never positive.
Its heading is read as `budget.rag_heading` reads the four-line shape (the seeds write it without a colon, in any
case), also alone on its line with the text below it, and the sentence "Do not use when …" inside a paragraph.

Phrases are a function of the same two fields as the embedded text, so the text's hash covers them; the scheme
number says how they were cut, and a stored row of another scheme is re-embedded by the sweep.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from catalog.domain.budget import rag_heading

# Bumped whenever `tool_phrases` cuts differently: vectors of another scheme count as lacking and are re-embedded.
# 2: the DO NOT USE WHEN heading without a colon, in any case, alone on its line, or as a sentence of a paragraph.
PHRASE_SCHEME = 2
# At most this many phrases per tool (the manifest allows 16 languages × 40 keywords): the first keywords of each
# language in turn, after the description's sentences. The demo's largest tool has 11.
POSITIVE_MAX = 48
NEGATIVE_MAX = 4
PHRASE_CHARS_MAX = 300  # a sentence longer than this is cut: a phrase is meant to be short

# Headings beyond the seed's four, read only with their colon: without it "Returns the list …" or "When the user …"
# is a sentence.
_OTHER_LABEL = re.compile(r"^\s*(RETURNS|NOTE|WHEN)\s*:\s*", re.IGNORECASE)
_NEGATIVE_LABEL = "DO NOT USE WHEN"
# Markdown around a heading or a list item: "## DO NOT USE WHEN", "- **Do not use when**: …", "• the user …".
_LEAD_MARKUP = re.compile(r"^[\s#>*_•\-]*")
_HEADING_TAIL = re.compile(r"^[\s*_:\-\u2013\u2014]*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# Sentence ends: a full stop, ! or ? followed by a space and an upper-case letter or a digit (so "e.g. the" and
# "Dr. Roth" mostly stay whole; a missed split only makes one phrase longer).
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-ZÄÖÜ0-9])")


@dataclass(frozen=True)
class Phrases:
    positive: tuple[str, ...]
    negative: tuple[str, ...]

    @property
    def all(self) -> tuple[str, ...]:
        """Positives then negatives: the order their vectors are stored in."""
        return self.positive + self.negative


def _sentences(text: str) -> list[str]:
    return [s.strip()[:PHRASE_CHARS_MAX] for s in _SENTENCE_END.split(text) if s.strip()]


def _keywords_in_turn(rag_keywords: Mapping[str, Sequence[str]] | None) -> list[str]:
    """Keywords language by language in turn (en₁, de₁, en₂, de₂ …), so a cap keeps every language."""
    lists = [[w.strip() for w in (rag_keywords or {})[lang] if w and w.strip()] for lang in sorted(rag_keywords or {})]
    longest = max((len(words) for words in lists), default=0)
    return [words[i][:PHRASE_CHARS_MAX] for i in range(longest) for words in lists if i < len(words)]


def _heading(line: str) -> tuple[str, str] | None:
    """(heading, the text after it on this line) when `line` starts with a heading, else None."""
    found = rag_heading(_LEAD_MARKUP.sub("", line))
    if found is not None:
        return found[0], _HEADING_TAIL.sub("", found[1])
    other = _OTHER_LABEL.match(line)
    return (other.group(1).upper(), line[other.end() :]) if other else None


def _lines(rag_description: str) -> Iterator[tuple[bool, str]]:
    """(whether it says what the tool is not for, text) for each line with text.

    A heading's section runs over the lines below it until the next heading, a blank line, or the first line after
    a list that is not one of its items (nor indented under one): the seeds put a heading alone on its line with its
    text (often a list) below, and wrap long lines. Blank lines straight after a heading alone on its line belong to
    it. Text before any heading is positive."""
    negative = False
    awaiting_text = False  # a heading alone on its line, its text not seen yet
    in_list = False
    for line in rag_description.splitlines():
        heading = _heading(line)
        if heading is not None:
            negative, text = heading[0] == _NEGATIVE_LABEL, heading[1]
            awaiting_text, in_list = not text.strip(), False
        elif not line.strip():
            negative, in_list = negative and awaiting_text, False
            continue
        else:
            text, awaiting_text = line, False
            item = _BULLET.match(line) is not None
            if in_list and not item and not line[:1].isspace():
                negative = False  # the list is over: this line is the description's again
            in_list = item or (in_list and line[:1].isspace())
        if text.strip():
            yield negative, _BULLET.sub("", text).strip()


def tool_phrases(rag_description: str, rag_keywords: Mapping[str, Sequence[str]] | None) -> Phrases:
    positive: list[str] = []
    negative: list[str] = []
    for is_negative, text in _lines(rag_description):
        for sentence in _sentences(text):
            # "Lists allergies. Do not use when …": a sentence of a paragraph may say what the tool is not for.
            inline = None if is_negative else rag_heading(sentence)
            if inline is not None and inline[0] == _NEGATIVE_LABEL and inline[1]:
                negative.append(inline[1])
            elif is_negative:
                negative.append(sentence)
            else:
                positive.append(sentence)
    positive.extend(_keywords_in_turn(rag_keywords))
    return Phrases(tuple(_unique(positive)[:POSITIVE_MAX]), tuple(_unique(negative)[:NEGATIVE_MAX]))


def lexical_text(rag_description: str, rag_keywords: Mapping[str, Sequence[str]] | None, declared_id: str) -> str:
    """What the lexical signal matches a prompt against: the tool's words without its `DO NOT USE WHEN` line
    (whose words name what the tool is not for), its keywords, and its id split into words."""
    phrases = tool_phrases(rag_description, rag_keywords)
    return "\n".join([*phrases.positive, id_words(declared_id)])


def id_words(declared_id: str) -> str:
    """`listAllergies` / `list-allergies` / `list_allergies` → `list allergies`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", declared_id)
    return re.sub(r"[-_.]+", " ", spaced).lower().strip()


def _unique(items: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)
