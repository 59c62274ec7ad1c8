"""The seeds' enumerations, spelled exactly as the manifests spell them."""

from __future__ import annotations

import re
from enum import StrEnum


class System(StrEnum):
    """The two catalogs with a fixed name. Each MCP server is a catalog of its own: `mcp:<server id>`."""

    CONDOR = "condor"
    TUCAN = "tucan"


# An MCP server's catalog is the system `mcp:<server id>` (TOOLS.md, `mcp-tools/v1`): its own revisions,
# sign-offs and findings, its tools keyed within it.
MCP_SYSTEM_PREFIX = "mcp:"
MCP_SERVER_ID_MAX = 60
SYSTEM_MAX = len(MCP_SYSTEM_PREFIX) + MCP_SERVER_ID_MAX
_MCP_SERVER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
# The same as one pattern, for the API's schemas (a documented bound on every `system` parameter).
SYSTEM_PATTERN = r"^(condor|tucan|mcp:[A-Za-z0-9][A-Za-z0-9_.\-]{0,59})$"
SYSTEM_PATTERN_OR_EMPTY = r"^(|condor|tucan|mcp:[A-Za-z0-9][A-Za-z0-9_.\-]{0,59})$"


def mcp_system(server_id: str) -> str:
    """The system of an MCP server's catalog."""
    return f"{MCP_SYSTEM_PREFIX}{server_id}"


def mcp_server_of(system: str) -> str | None:
    """The server id of an MCP system, None for condor and tucan."""
    return system[len(MCP_SYSTEM_PREFIX) :] if system.startswith(MCP_SYSTEM_PREFIX) else None


def mcp_server_id_problem(server_id: str) -> str | None:
    """Why a string is no MCP server id (letters A-Z, digits, _ . -, starting with a letter or digit, at most
    60 characters), or None."""
    if not server_id:
        return "must not be empty"
    if len(server_id) > MCP_SERVER_ID_MAX:
        return f"at most {MCP_SERVER_ID_MAX} characters, got {len(server_id)}"
    if not _MCP_SERVER_ID.fullmatch(server_id):
        return "may contain only letters A-Z, digits and _ . - (and start with a letter or digit)"
    return None


def system_problem(system: str) -> str | None:
    """Why a string names no catalog system (`condor`, `tucan` or `mcp:<server id>`), or None."""
    if system in {s.value for s in System}:
        return None
    server = mcp_server_of(system)
    if server is None:
        return "expected condor, tucan or mcp:<server id>"
    problem = mcp_server_id_problem(server)
    return f"mcp:<server id>: the server id {problem}" if problem else None


class Plane(StrEnum):
    BUSINESS = "business"
    PLANNER_CONTROL = "planner-control"
    AGENT_CONTROL = "agent-control"


class Availability(StrEnum):
    PRODUCTION = "production"
    PREVIEW = "preview"
    DEMO_ONLY = "demo-only"


class PolicyClass(StrEnum):
    READ = "read"
    MUTATE = "mutate"


class RetryClass(StrEnum):
    NONE = "none"
    TRANSIENT = "transient"


class Idempotency(StrEnum):
    NONE = "none"
    NATURAL = "natural"
    DURABLE_REQUIRED = "durable-required"


class HitlTier(StrEnum):
    HIGH = "high"
    LOW = "low"


class FloorTrigger(StrEnum):
    ATTACHMENTS = "attachments"
    MULTI_ENTITY_INTAKE = "multi-entity-intake"


class ChangeKind(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


class ReviewState(StrEnum):
    PENDING = "pending-review"
    APPROVED = "approved"
    CHANGES_REQUESTED = "changes-requested"
    # A newer revision's sign-off put this one's changes in effect (only a system's newest pending revision is
    # signed off: its sign-off covers every change still waiting).
    SUPERSEDED = "superseded"


# The axes whose change needs a safety officer's sign-off.
SAFETY_RELEVANT_FIELDS: tuple[str, ...] = (
    "plane",
    "availability",
    "policy_class",
    "policy_domain",
    "mutating",
    "retry_class",
    "idempotency",
    "hitl_tier",
    "always_include",
)

# Configuration sections whose change needs sign-off: they decide what is active, forced or who is paged.
SAFETY_RELEVANT_SECTIONS: tuple[str, ...] = ("ownership", "profiles", "forcedFloors", "agents")

# Wildcard module in an ownership rule.
ANY_MODULE = "*"
