"""The words of card strings: the seam modules, translation states, checks and their severities, and the
slots a string can fill on a card with the length each holds.

The card chrome (titles, key/value labels, empty states, FHIR status labels, severity enums) is split in
the source into the seam modules base, status, extras and hitl.
"""

from __future__ import annotations

from enum import StrEnum


class Module(StrEnum):
    BASE = "base"
    STATUS = "status"
    EXTRAS = "extras"
    HITL = "hitl"

    @property
    def source_file(self) -> str:
        """The source module of the seam, used as the .po location (`#: card-i18n-status.ts`)."""
        return f"card-i18n-{self.value}.ts"


MODULE_BY_FILE = {m.source_file: m for m in Module}


class State(StrEnum):
    UNTRANSLATED = "untranslated"
    FUZZY = "fuzzy"
    TRANSLATED = "translated"
    REVIEWED = "reviewed"


class Check(StrEnum):
    MISSING = "missing"
    PLACEHOLDER = "placeholder"
    PLURAL_FORMS = "plural-forms"
    MARKUP = "markup"
    SAME_AS_SOURCE = "same-as-source"
    NEVER_LOCALIZE = "never-localize"
    TOO_LONG = "too-long"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Slot(StrEnum):
    """Where on a card a string appears; each slot has a maximum length the layout can hold."""

    TITLE = "title"
    LABEL = "label"
    STATUS = "status"
    SEVERITY = "severity"
    ACTION = "action"
    EMPTY = "empty"
    MESSAGE = "message"
    HINT = "hint"


# Characters of rendered text (placeholders filled with the sample data) each slot holds before the card
# layout truncates or wraps badly. A string may carry its own, stricter or looser, maximum.
SLOT_MAX_CHARS: dict[str, int] = {
    Slot.TITLE: 40,
    Slot.LABEL: 28,
    Slot.STATUS: 24,
    Slot.SEVERITY: 16,
    Slot.ACTION: 28,
    Slot.EMPTY: 120,
    Slot.MESSAGE: 160,
    Slot.HINT: 220,
}
