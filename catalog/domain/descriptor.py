"""The normalized descriptor: one shape for both dialects, each axis its own field."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

# Declared fields, in the order the console shows them. The content hash covers exactly these.
DECLARED_FIELDS: tuple[str, ...] = (
    "plane",
    "module",
    "category",
    "availability",
    "policy_class",
    "policy_domain",
    "mutating",
    "retry_class",
    "idempotency",
    "hitl_tier",
    "description",
    "rag_description",
    "rag_keywords",
    "instruction_fragment",
    "styling_fragment",
    "output_instructions",
    "output_contains_ids",
    "always_include",
    "metadata_ref",
    "source_path",
    "aliases",
    "input_schema",
    # An MCP tool's own declaration beyond the axes (catalog.domain.mcp): its server, name, title, output
    # schema and annotations exactly as declared; None for Condor and TUCAN tools (and then left out of the hash).
    "mcp",
)


@dataclass(frozen=True)
class Descriptor:
    declared_id: str
    plane: str
    module: str
    availability: str
    mutating: bool
    retry_class: str
    idempotency: str
    category: str = ""
    policy_class: str | None = None
    policy_domain: str | None = None
    hitl_tier: str | None = None
    description: str = ""
    rag_description: str = ""
    rag_keywords: dict[str, list[str]] = field(default_factory=dict)
    instruction_fragment: str | None = None
    styling_fragment: str | None = None
    output_instructions: str | None = None
    output_contains_ids: bool = False
    always_include: bool = False
    metadata_ref: str | None = None
    source_path: str | None = None
    aliases: list[str] = field(default_factory=list)
    input_schema: dict[str, Any] | None = None
    mcp: dict[str, Any] | None = None

    def declared(self) -> dict[str, Any]:
        """The declared fields as plain values (what a revision diff compares). Shallow: do not mutate."""
        return {name: getattr(self, name) for name in DECLARED_FIELDS}

    def content_hash(self) -> str:
        return content_hash(self.declared())


def content_hash(declared: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of the declared fields (sorted keys, no whitespace). `mcp` counts only
    where it is set, so a Condor or TUCAN tool hashes as it did before MCP tools existed."""
    if declared.get("mcp") is None:
        declared = {k: v for k, v in declared.items() if k != "mcp"}
    payload = json.dumps(declared, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
