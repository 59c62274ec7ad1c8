"""What the checks read in a text and how a card renders it: placeholders, HTML markup, and the
placeholders filled with clinical sample data (which is never localized)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

# Plural strings name their number {count}; a plural form used for exactly one number (German "one" is
# only n = 1) may leave it out ("Ein Medikament"), every other form must keep it.
COUNT_PLACEHOLDER = "count"

# What the checks and the preview fill placeholders with: clinical sample data, never localized.
SAMPLE_VALUES: dict[str, str] = {
    "count": "3",
    "name": "Erika Mustermann",
    "patient": "Erika Mustermann",
    "drug": "Metformin 500 mg",
    "code": "E11.9",
    "date": "2025-03-14",
    "time": "09:30",
    "minutes": "15",
    "hours": "4",
    "days": "7",
    "tool": "prescribeMedication",
    "group": "approval-escalation",
    "query": "Metformin",
    "system": "ORBIS",
    "domain": "medication",
    "value": "7.2",
    "unit": "%",
    "amount": "128.40 EUR",
    "number": "RE-2025-00417",
    "total": "12",
    "shown": "5",
    "pages": "4",
    "practitioner": "Dr. med. Jonas Weber",
    "department": "Innere Medizin",
    "insurer": "AOK Bayern",
    "substance": "Penicillin G",
    "reason": "Dose exceeds the renal limit",
}

PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
TAG_RE = re.compile(r"<\s*(/?)\s*([A-Za-z][A-Za-z0-9]*)\b([^<>]*?)\s*(/?)\s*>")
ENTITY_RE = re.compile(r"&(#[0-9]+|#x[0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);")
LETTER_RE = re.compile(r"[^\W\d_]")


def placeholders(*texts: str) -> list[str]:
    """The placeholder names of the texts, in order of first appearance."""
    found: dict[str, None] = {}
    for text in texts:
        for name in PLACEHOLDER_RE.findall(text or ""):
            found.setdefault(name, None)
    return list(found)


def markup(text: str) -> Counter[str]:
    """The HTML tags and entities of a text, normalized (case, spacing), as a multiset."""
    tokens: Counter[str] = Counter()
    for closing, name, attrs, self_closing in TAG_RE.findall(text or ""):
        attrs = " ".join(attrs.split())
        tokens[f"<{closing}{name.lower()}{(' ' + attrs) if attrs else ''}{self_closing}>"] += 1
    for entity in ENTITY_RE.findall(text or ""):
        tokens[f"&{entity};"] += 1
    return tokens


def render(text: str, values: Mapping[str, str] = SAMPLE_VALUES) -> str:
    """Fill the placeholders (unknown ones stay as written), as the card renders them."""
    return PLACEHOLDER_RE.sub(lambda m: str(values.get(m.group(1), m.group(0))), text or "")


def has_words(text: str) -> bool:
    """Whether any letters are left once placeholders and markup are removed (else nothing to translate)."""
    bare = ENTITY_RE.sub("", TAG_RE.sub("", PLACEHOLDER_RE.sub("", text or "")))
    return bool(LETTER_RE.search(bare))
