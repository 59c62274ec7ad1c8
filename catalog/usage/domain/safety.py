"""The runtime safety checks: one execution against the declaration in effect. Pure; each answers the finding's
message, or None when the execution is fine. The rules they decide are in catalog/domain/rules/runtime.py."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from catalog.usage.domain.spans import Execution

HIGH, LOW = "high", "low"
NO_TIER = ("", "none", "null", "unset")


@dataclass(frozen=True)
class Served:
    """What the runtime is allowed to do with a tool under one kind of profile (floors applied)."""

    policy_class: str  # the effective policy class: read or mutate
    hitl_tier: str | None
    retry_class: str  # the effective retry class: never transient for a mutation
    mutating: bool  # the mutating predicate


@dataclass(frozen=True)
class ToolRef:
    pk: int
    system: str
    declared_id: str
    canonical_key: str
    plane: str
    newest: Served  # what non-clinical profiles are served
    clinical: Served | None  # what clinical profiles are served; None: not signed off, does not exist there

    def served(self, clinical: bool) -> Served:
        """Under a clinical profile what is in effect (a tool never signed off is judged by its newest declaration,
        which it should not have run under at all); elsewhere the newest import."""
        if clinical and self.clinical is not None:
            return self.clinical
        return self.newest

    @property
    def ever_mutating(self) -> bool:
        """Fail closed: a tool either declaration calls mutating is a mutation for the retried-write check."""
        return self.newest.mutating or bool(self.clinical and self.clinical.mutating)


def stamp_mismatch(stamped: dict[str, str], served: Served) -> list[str]:
    """Each stamped attribute that disagrees with what is in effect, as `condor.x stamped 'a', in effect 'b'`. Only
    what the runtime stamped is compared: an attribute it did not send says nothing."""
    expected = {"policy_class": served.policy_class, "hitl_tier": served.hitl_tier, "retry_class": served.retry_class}
    problems = []
    for name, value in sorted(stamped.items()):
        want = expected[name]
        got: str | None = value.lower()
        if name == "hitl_tier" and got in NO_TIER:
            got = None
        if got != want:
            problems.append(f"condor.{name} stamped {value!r}, in effect {want or 'none'!r}")
    return problems


def approval_needed(served: Served, *, clinical: bool) -> str | None:
    """Why this execution needed a consumed approval, or None. Under a clinical profile a tier-high mutation always
    waits for an approver, and so does a mutation with no tier (the gate suspends it, flagged)."""
    if not clinical or not served.mutating:
        return None
    if served.hitl_tier == HIGH:
        return "tier high"
    if served.hitl_tier != LOW:
        return "a mutation without a HITL tier"
    return None


def retried_write_message(tool: ToolRef, tool_call_id: str, executions: int) -> str | None:
    if executions < 2 or not tool.ever_mutating:
        return None
    return (
        f"{tool.declared_id} mutates and ran {executions} times for tool call {tool_call_id!r}: a retried write "
        "lands twice (a duplicate prescription or bill). Its retry class must keep the runtime from retrying it; "
        "check what was written"
    )


def candidate_set_problem(tool: ToolRef, execution: Execution, served_keys: Collection[str] | None) -> str | None:
    """A business tool that ran outside the candidate set its run was resolved with. `served_keys`: that set's tool
    keys, or None when the console does not know the set (never served, or pruned): then it cannot vouch for it."""
    if not execution.candidate_set_id or tool.plane != "business":
        return None
    if served_keys is None:
        return (
            f"{tool.declared_id} ran for candidate set {execution.candidate_set_id}, which the console never served "
            "(or no longer keeps): nothing shows the tool was offered"
        )
    if tool.canonical_key in served_keys:
        return None
    return (
        f"{tool.declared_id} ran but was not in candidate set {execution.candidate_set_id} "
        f"({len(served_keys)} tools) that its run was resolved with"
    )
