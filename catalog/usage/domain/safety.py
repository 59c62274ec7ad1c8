"""The runtime safety checks: one execution against the declaration in effect. Pure; each answers the finding's
message, or None when the execution is fine. The rules they decide are in catalog/domain/rules/runtime.py."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from catalog.domain.messages import N_, Message
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
    return [m.render() for m in stamp_mismatch_messages(stamped, served)]


def stamp_mismatch_messages(stamped: dict[str, str], served: Served) -> list[Message]:
    """`stamp_mismatch` as messages to translate (catalog.domain.messages)."""
    expected = {"policy_class": served.policy_class, "hitl_tier": served.hitl_tier, "retry_class": served.retry_class}
    problems = []
    for name, value in sorted(stamped.items()):
        want = expected[name]
        got: str | None = value.lower()
        if name == "hitl_tier" and got in NO_TIER:
            got = None
        if got != want:
            problems.append(
                Message(
                    N_("condor.%(name)s stamped %(value)s, in effect %(want)s"),
                    {"name": name, "value": repr(value), "want": repr(want or "none")},
                )
            )
    return problems


def approval_needed(served: Served, *, clinical: bool) -> str | None:
    """Why this execution needed a consumed approval, or None. Under a clinical profile a tier-high mutation always
    waits for an approver, and so does a mutation with no tier (the gate suspends it, flagged)."""
    if not clinical or not served.mutating:
        return None
    if served.hitl_tier == HIGH:
        return N_("tier high")
    if served.hitl_tier != LOW:
        return N_("a mutation without a HITL tier")
    return None


def retried_write_message(tool: ToolRef, tool_call_id: str, executions: int) -> Message | None:
    if executions < 2 or not tool.ever_mutating:
        return None
    return Message(
        N_(
            "%(tool)s mutates and ran %(n)s times for tool call %(call)s: a retried write lands twice (a duplicate "
            "prescription or bill). Its retry class must keep the runtime from retrying it; check what was written"
        ),
        {"tool": tool.declared_id, "n": executions, "call": repr(tool_call_id)},
    )


def candidate_set_problem(tool: ToolRef, execution: Execution, served_keys: Collection[str] | None) -> str | None:
    """A business tool that ran outside the candidate set its run was resolved with. `served_keys`: that set's tool
    keys, or None when the console does not know the set (never served, or pruned): then it cannot vouch for it."""
    problem = candidate_set_message(tool, execution, served_keys)
    return None if problem is None else problem.render()


def candidate_set_message(tool: ToolRef, execution: Execution, served_keys: Collection[str] | None) -> Message | None:
    """`candidate_set_problem` as a message to translate."""
    if not execution.candidate_set_id or tool.plane != "business":
        return None
    params = {"tool": tool.declared_id, "set": execution.candidate_set_id}
    if served_keys is None:
        return Message(
            N_(
                "%(tool)s ran for candidate set %(set)s, which the console never served (or no longer keeps): nothing "
                "shows the tool was offered"
            ),
            params,
        )
    if tool.canonical_key in served_keys:
        return None
    return Message(
        N_("%(tool)s ran but was not in candidate set %(set)s (%(n)s tools) that its run was resolved with"),
        {**params, "n": len(served_keys)},
    )
