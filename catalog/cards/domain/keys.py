"""Card-string keys: their dotted shape and the never-localize guard.

Clinical data and LLM-facing text never pass through the seam; keys in those namespaces are refused
wherever a key enters (import, editor) and show a finding if the list grows after the key was stored.
"""

from __future__ import annotations

import re

NEVER_LOCALIZE_PREFIXES: dict[str, str] = {
    "clinical.": "clinical data is never localized",
    "data.": "clinical data is never localized",
    "patient.": "patient data is never localized",
    "drug.": "drug names are clinical data, never localized",
    "icd.": "ICD codes are clinical data, never localized",
    "code.": "clinical codes are never localized",
    "rag.": "LLM-facing text stays English",
    "llm.": "LLM-facing text stays English",
    "prompt.": "LLM-facing text stays English",
    "tool.": "tool text is LLM-facing and stays English",
}
NEVER_LOCALIZE_SEGMENTS: dict[str, str] = {
    "ragDescription": "ragDescription is LLM-facing and stays English",
    "ragKeywords": "ragKeywords are LLM-facing and stay English",
    "outputInstructions": "output instructions are LLM-facing and stay English",
    "instructionFragment": "instruction fragments are LLM-facing and stay English",
    "stylingFragment": "styling fragments are LLM-facing and stay English",
}

KEY_RE = re.compile(r"^[a-z][A-Za-z0-9]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)+$")


def never_localize_reason(key: str) -> str | None:
    """Why `key` may not be localized, or None when it is card chrome."""
    for prefix, reason in NEVER_LOCALIZE_PREFIXES.items():
        if key.startswith(prefix):
            return f"{prefix}* — {reason}"
    for segment in key.split("."):
        if segment in NEVER_LOCALIZE_SEGMENTS:
            return NEVER_LOCALIZE_SEGMENTS[segment]
    return None


def key_problem(key: str) -> str | None:
    """A structural problem with a key (refused at import), or None."""
    if not KEY_RE.match(key or ""):
        return f"key {key!r} is not a dotted card-string key like card.medication.title"
    reason = never_localize_reason(key)
    if reason:
        return f"key {key} is in a never-localize namespace ({reason})"
    return None
