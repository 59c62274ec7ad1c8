"""What a live listing answers, and how it fails: plain values, so that what handles a listing (services, tasks,
commands) imports no MCP SDK; only `catalog.mcp.client`, which reaches a server, does (0.5 s of imports that every
`manage.py` command, `whoowns` included, paid at start-up)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class McpFetchError(Exception):
    """A live listing failed; `message` says where and why, for a person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Listing:
    """What a server said about itself: `identity` from `initialize` ({name, version, protocolVersion, title,
    instructions}) and `tools`, the `tools/list` result as MCP's JSON (camelCase keys, absent fields absent)."""

    identity: dict[str, Any]
    tools: list[dict[str, Any]]
