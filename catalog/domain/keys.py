"""Tool id spellings: the canonical key and the name the LLM sees."""

from __future__ import annotations

import re
from functools import lru_cache

# Boundaries inside a camelCase word: "visitRecording" -> "visit|Recording",
# "HTTPResponse" -> "HTTP|Response". Digits stay attached to the word before them.
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s_\-.]+")


@lru_cache(maxsize=1 << 18)
def canonical_key(tool_id: str) -> str:
    """Fold any spelling of a tool id to one dotted lower-case key.

    visitRecordingCard, visit_recording_card, visit-recording-card, visit.recording.card and
    "visit recording card" all give "visit.recording.card". Remembered per spelling: the parser, the id checks,
    key-collision and the derived columns each fold every id of a 50,000-tool manifest (pure, so a cache is exact).
    """
    parts: list[str] = []
    for chunk in _SEPARATORS.split(tool_id.strip()):
        if chunk:
            parts.extend(p.lower() for p in _HUMP.split(chunk) if p)
    return ".".join(parts)


def llm_name(tool_id: str) -> str:
    """The name the model sees: Mastra exposes `show-modal` as `show_modal`."""
    return tool_id.replace("-", "_")
