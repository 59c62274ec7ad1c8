"""A live listing as an `mcp-tools/v1` manifest (TOOLS.md), byte for byte the same while the server is unchanged.

The importer compares a manifest's SHA-256 with the current revision's before it parses anything, so an unchanged
server re-imported every hour writes nothing only if its manifest comes out identical: nothing here depends on the
time, the transport or the order of a dict other than the server's own.
"""

from __future__ import annotations

import json
from typing import Any

from catalog.domain.manifest.mcp import MCP_FORMAT

_OPTIONAL_IDENTITY = ("title", "instructions")


def manifest_from_listing(
    server_id: str,
    identity: dict[str, Any],
    tools: list[dict[str, Any]],
    governance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The document: the server's identity under the id the console knows it by, the stored governance overlay
    (when there is one), and the tools exactly as the server listed them, in its order."""
    server: dict[str, Any] = {
        "id": server_id,
        "name": identity.get("name"),
        "version": identity.get("version"),
        "protocolVersion": identity.get("protocolVersion"),
    }
    for key in _OPTIONAL_IDENTITY:
        if identity.get(key) is not None:
            server[key] = identity[key]
    doc: dict[str, Any] = {"format": MCP_FORMAT, "server": server}
    if governance:
        doc["governance"] = governance
    doc["tools"] = tools
    return doc


def manifest_bytes(doc: dict[str, Any]) -> bytes:
    """The manifest as UTF-8 JSON: keys in insertion order (not sorted: the server's own order of schema keys is
    kept, and it is stable), two-space indent, a trailing newline."""
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
