"""Byte budgets: the one truncation routine and the candidate manifest line.

The seed's meta-tools bound each candidate line to MANIFEST_MIN_BYTES..MANIFEST_MAX_BYTES and share one
truncateBytes; the reported bytes include any appended fragment, so budget accounting stays honest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from catalog.domain.keys import llm_name

MANIFEST_MIN_BYTES = 120
MANIFEST_MAX_BYTES = 300
FRAGMENT_MAX_BYTES = 120
ELLIPSIS = "…"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def truncate_bytes(text: str, limit: int, *, marker: str = ELLIPSIS) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, marker included, never splitting a character."""
    if limit < 0:
        raise ValueError("limit must be ≥ 0")
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - utf8_len(marker)
    if room < 0:
        return ""
    # errors="ignore" drops a trailing partial multi-byte sequence instead of emitting half a character.
    return data[:room].decode("utf-8", errors="ignore") + marker


# The four headings of the seed's ragDescription shape, in order. The seeds write them without a colon
# ("USE WHEN / DO NOT USE WHEN / REQUIRES / PRODUCES"), manifests mostly with one: both are read, in any case.
RAG_HEADINGS = ("USE WHEN", "DO NOT USE WHEN", "REQUIRES", "PRODUCES")

# The longer heading first, anchored at the line's start, so a "DO NOT USE WHEN" line is never read as a
# "USE WHEN" one; `\b` keeps "REQUIRESx" or "USE WHENEVER" from counting as a heading. The separator after it is
# an optional colon or dash; the rest of the line is the heading's text.
_HEADING = re.compile(r"^(DO\s+NOT\s+USE\s+WHEN|USE\s+WHEN|REQUIRES|PRODUCES)\b\s*[:\-\u2013\u2014]?\s*", re.IGNORECASE)


def rag_heading(line: str) -> tuple[str, str] | None:
    """(heading, text after it) when `line` starts with one of the four headings, else None."""
    match = _HEADING.match(line.strip())
    if match is None:
        return None
    heading = " ".join(match.group(1).upper().split())
    return heading, line.strip()[match.end() :].strip()


def rag_line(rag_description: str, heading: str) -> str:
    """The text after `heading` ("USE WHEN", colon optional) in a four-line ragDescription, or ""."""
    wanted = " ".join(heading.rstrip(":").upper().split())
    for line in (rag_description or "").splitlines():
        found = rag_heading(line)
        if found is not None and found[0] == wanted:
            return found[1]
    return ""


def param_synopsis(input_schema: dict[str, Any] | None) -> str:
    """`patientId, from?, to?` from a JSON Schema object: required parameters first, optional marked."""
    if not input_schema or not isinstance(input_schema.get("properties"), dict):
        return ""
    required = [p for p in input_schema.get("required") or [] if p in input_schema["properties"]]
    optional = [p for p in input_schema["properties"] if p not in required]
    return ", ".join([*required, *(f"{p}?" for p in optional)])


@dataclass(frozen=True)
class ManifestLine:
    text: str  # what the planner sees (bounded)
    natural_bytes: int  # bytes before any truncation, fragment included
    bytes: int  # bytes of `text`, fragment included
    # bytes of what the line must carry whole: the name, the USE WHEN text and the fragment. The REQUIRES / PRODUCES
    # detail only fills the room they leave, so shortening it is compaction, not a budget overrun.
    required_bytes: int

    @property
    def truncated(self) -> bool:
        return self.natural_bytes > self.bytes

    @property
    def within_bounds(self) -> bool:
        return self.bytes >= MANIFEST_MIN_BYTES and self.required_bytes <= MANIFEST_MAX_BYTES


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."


def candidate_manifest_line(
    *,
    declared_id: str,
    rag_description: str,
    description: str = "",
    instruction_fragment: str | None = None,
    input_schema: dict[str, Any] | None = None,
) -> ManifestLine:
    """One compact line per candidate, as the seed's buildCandidateManifest renders it:
    `name: what it is for. Requires: …. Produces: … — fragment`, at most MANIFEST_MAX_BYTES.

    The purpose is the ragDescription's USE WHEN text (its first line, else the description, when it has none);
    then its REQUIRES and PRODUCES texts, or the parameter synopsis `(patientId, from?)` when it declares neither.
    The instruction fragment is appended at planner phase and counts against the line's bytes. The detail takes
    the room the name, purpose and fragment leave; when those alone are over budget the whole line is cut.
    truncate_bytes is the one truncation routine for all of it.
    """
    purpose = rag_line(rag_description, "USE WHEN")
    if not purpose:
        first = next((ln.strip() for ln in (rag_description or "").splitlines() if ln.strip()), "")
        purpose = first or description.strip()
    requires = rag_line(rag_description, "REQUIRES")
    produces = rag_line(rag_description, "PRODUCES")
    name = llm_name(declared_id)
    if requires or produces:
        head = f"{name}: {_sentence(purpose)}"
        detail = "".join(
            [f" Requires: {_sentence(requires)}" if requires else "", f" Produces: {produces}" if produces else ""]
        )
    else:
        params = f"({param_synopsis(input_schema)})" if input_schema is not None else ""
        head, detail = f"{name}{params}: {purpose}", ""
    tail = f" — {truncate_bytes(instruction_fragment, FRAGMENT_MAX_BYTES)}" if instruction_fragment else ""
    required = utf8_len(head) + utf8_len(tail)
    natural = head + detail + tail
    if required <= MANIFEST_MAX_BYTES:
        bounded = head + truncate_bytes(detail, MANIFEST_MAX_BYTES - required) + tail
    else:
        bounded = truncate_bytes(natural, MANIFEST_MAX_BYTES)
    return ManifestLine(text=bounded, natural_bytes=utf8_len(natural), bytes=utf8_len(bounded), required_bytes=required)


def manifest_line_of(tool: Any) -> ManifestLine:
    """candidate_manifest_line of anything carrying a tool's declaration under the model's names (a Tool row,
    a descriptor, an indexed tool)."""
    return candidate_manifest_line(
        declared_id=tool.declared_id,
        rag_description=tool.rag_description,
        description=tool.description,
        instruction_fragment=tool.instruction_fragment,
        input_schema=tool.input_schema,
    )
