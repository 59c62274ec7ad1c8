"""The seeds' enumerations, spelled exactly as the manifests spell them."""

from __future__ import annotations

from enum import StrEnum


class System(StrEnum):
    CONDOR = "condor"
    TUCAN = "tucan"


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
