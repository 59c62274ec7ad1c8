"""Byte budgets: the one truncation routine and the candidate manifest line.

The seed's meta-tools bound each candidate line to MANIFEST_MIN_BYTES..MANIFEST_MAX_BYTES and share one
truncateBytes; the reported bytes include any appended fragment, so budget accounting stays honest.
"""

from __future__ import annotations

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


def rag_line(rag_description: str, prefix: str) -> str:
    """The text after `prefix` (e.g. "USE WHEN:") in a four-line ragDescription, or ""."""
    for line in (rag_description or "").splitlines():
        line = line.strip()
        if line.upper().startswith(prefix):
            return line[len(prefix) :].strip()
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
    natural_bytes: int  # bytes before truncation, fragment included
    bytes: int  # bytes of `text`

    @property
    def truncated(self) -> bool:
        return self.natural_bytes > self.bytes

    @property
    def within_bounds(self) -> bool:
        return MANIFEST_MIN_BYTES <= self.natural_bytes <= MANIFEST_MAX_BYTES


def candidate_manifest_line(
    *,
    declared_id: str,
    rag_description: str,
    description: str = "",
    instruction_fragment: str | None = None,
    input_schema: dict[str, Any] | None = None,
) -> ManifestLine:
    """One compact line per candidate: `name(params): what it is for → what it produces — fragment`.

    Built from the ragDescription's USE WHEN and PRODUCES lines (the description when there are none);
    the instruction fragment is appended at planner phase and counts against the line's bytes.
    """
    purpose = rag_line(rag_description, "USE WHEN:")
    if not purpose:
        first = next((ln.strip() for ln in (rag_description or "").splitlines() if ln.strip()), "")
        purpose = first or description.strip()
    produces = rag_line(rag_description, "PRODUCES:")
    params = f"({param_synopsis(input_schema)})" if input_schema is not None else ""
    line = f"{llm_name(declared_id)}{params}: {purpose}"
    if produces:
        line += f" → {produces}"
    if instruction_fragment:
        line += f" — {truncate_bytes(instruction_fragment, FRAGMENT_MAX_BYTES)}"
    bounded = truncate_bytes(line, MANIFEST_MAX_BYTES)
    return ManifestLine(text=bounded, natural_bytes=utf8_len(line), bytes=utf8_len(bounded))


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
