"""A tool's phrases: the short texts embedded one by one beside its whole text (TOOLS.md, "Tool-RAG", signals).

A whole-text vector averages a tool's description with every keyword, so one distinct keyword ("Blutdruckverlauf")
weighs little in it. Each keyword and each description sentence gets a vector of its own, and the tool scores by
its best one. The `DO NOT USE WHEN` line says what the tool is *not* for: it is a negative phrase, never positive.

Phrases are a function of the same two fields as the embedded text, so the text's hash covers them; the scheme
number says how they were cut, and a stored row of another scheme is re-embedded by the sweep.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Bumped whenever `tool_phrases` cuts differently: vectors of another scheme count as lacking and are re-embedded.
PHRASE_SCHEME = 1
# At most this many phrases per tool (the manifest allows 16 languages × 40 keywords): the first keywords of each
# language in turn, after the description's sentences. The demo's largest tool has 11.
POSITIVE_MAX = 48
NEGATIVE_MAX = 4
PHRASE_CHARS_MAX = 300  # a sentence longer than this is cut: a phrase is meant to be short

_LABEL = re.compile(r"^\s*(USE WHEN|DO NOT USE WHEN|REQUIRES|PRODUCES|RETURNS|NOTE|WHEN)\s*:\s*", re.IGNORECASE)
_NEGATIVE_LABEL = "DO NOT USE WHEN"
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


def tool_phrases(rag_description: str, rag_keywords: Mapping[str, Sequence[str]] | None) -> Phrases:
    positive: list[str] = []
    negative: list[str] = []
    for line in rag_description.splitlines():
        label = _LABEL.match(line)
        text = line[label.end() :] if label else line
        if label and label.group(1).upper() == _NEGATIVE_LABEL:
            negative.extend(_sentences(text))
        else:
            positive.extend(_sentences(text))
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
