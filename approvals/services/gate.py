"""The suspend gate applied to the live catalog: which tool a call means, as its profile is served it, and whether
it may run, must wait for an approver or is refused (approvals.domain.suspend_policy does the deciding)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from approvals.catalog_index import CatalogIndex, GateProfile, GateTool, catalog_index
from approvals.domain import Decision, PolicyOutcome, ServedSet, candidate_set_refusal, suspend_policy
from approvals.models import ApprovalRequest
from approvals.schema import schema_errors
from approvals.selectors import tool_lookup
from approvals.services.common import ApprovalRefused
from catalog.domain.effect import floored_tier
from catalog.domain.floors import floor_for_inputs
from catalog.domain.profiles import plan_eligible_under
from catalog.models import Tool
from catalog.selectors.floors import tier_floors


@dataclass
class Evaluation:
    decision: str
    reason: str
    message: str
    tool: GateTool | Tool | None = None
    request: ApprovalRequest | None = None
    created: bool = False
    candidates: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CandidateSetClaim:
    """The candidate set a call says its run was resolved with, and what the console knows of it (None: nothing)."""

    set_id: str
    served: ServedSet | None


def _refused(outcome: PolicyOutcome, tool: GateTool | None = None) -> Evaluation:
    return Evaluation(outcome.decision.value, outcome.reason, outcome.message, tool=tool)


def _check_args(args: dict[str, Any], tool: GateTool, label: str) -> None:
    """ApprovalRefused when the arguments do not match the input schema the profile is served."""
    problems = schema_errors(args, tool.input_schema)
    if problems:
        raise ApprovalRefused(
            f"args do not match the input schema of {label}: {len(problems)} problem(s)",
            code="invalid-args",
            status=422,
            errors=problems,
        )


def _awaiting(tool: GateTool, label: str, profile: str) -> Evaluation:
    return Evaluation(
        Decision.REFUSE.value,
        "awaiting-signoff",
        f"{label} is new and awaits a safety officer's sign-off: it does not exist under clinical profile "
        f"{profile!r} until then",
        tool=tool,
    )


def _with_floor(tool: GateTool, proposed: GateTool) -> GateTool:
    """A mutating tool's tier raised to the safety officers' floors (`floored_tier`): those the inputs of what is
    served match, and those of the newest declaration (`proposed`) when it is not what is served."""
    if not tool.is_mutating:
        return tool
    floor, _ = floor_for_inputs(
        declared_id=tool.declared_id,
        llm_name=tool.llm_name,
        canonical_key=tool.canonical_key,
        system=tool.system,
        inputs=[(t.policy_domain, t.module, t.category) for t in (tool, proposed)],
        floors=tier_floors(),
    )
    tier = floored_tier(tool.hitl_tier, floor)
    return tool if tier == tool.hitl_tier else replace(tool, hitl_tier=tier)


def _looked_up(
    index: CatalogIndex, tool_name: str, system: str | None, profile: str
) -> Evaluation | tuple[GateTool | None, GateProfile]:
    """The tool the name means (None: no live tool) and the profile, or the refusal of an ambiguous name or an
    unknown profile."""
    profile_row = index.profiles.get(profile)
    clinical = profile_row is not None and profile_row.clinical
    match = tool_lookup(tool_name, system=system, index=index, clinical=clinical)
    if match.ambiguous:
        names = [f"{t.system}:{t.declared_id}" for t in match.candidates]
        return Evaluation(
            Decision.REFUSE.value,
            "ambiguous-tool",
            f"tool {tool_name!r} matches {len(names)} live tools ({', '.join(names)}); "
            "send the exact declared id, or `system` to choose",
            candidates=names,
        )
    if profile_row is None:
        known = ", ".join(sorted(index.profiles)) or "none"
        return Evaluation(
            Decision.REFUSE.value,
            "unknown-profile",
            f"profile {profile!r} is not a catalog profile (known: {known})",
            tool=match.tool,
        )
    return match.tool, profile_row


@dataclass(frozen=True)
class GateView:
    """What the gate decides a call with: the live tool the name means as `profile` is served it (floors applied;
    None: no live tool by that name there), the profile, and whether the tool is plan-eligible under it."""

    tool: GateTool | None
    profile: GateProfile
    plan_eligible: bool


def gate_view(
    tool_name: str, *, system: str | None, profile: str, index: CatalogIndex | None = None
) -> Evaluation | GateView:
    """The tool a call names as the profile is served it, or the refusal of an ambiguous name, an unknown profile or
    a tool that awaits its first sign-off under a clinical profile. What `gate_call` decides with, and what the
    served-catalog agreement test compares with the policy API and resolve."""
    index = index or catalog_index()
    found = _looked_up(index, tool_name, system, profile)
    if isinstance(found, Evaluation):
        return found
    tool, profile_row = found
    if tool is not None:
        served = index.served(tool, clinical=profile_row.clinical)
        if served is None:
            return _awaiting(tool, f"{tool.system}:{tool.declared_id}", profile)
        tool = _with_floor(served, tool)
    eligible = tool is not None and plan_eligible_under(
        profile_row, plane=tool.plane, availability=tool.availability, declared_id=tool.declared_id, system=tool.system
    )
    return GateView(tool, profile_row, eligible)


def gate_call(
    *,
    tool_name: str,
    system: str | None,
    profile: str,
    dispatch_mode: str,
    args: dict[str, Any],
    claim: CandidateSetClaim | None = None,
) -> Evaluation | tuple[GateTool, PolicyOutcome]:
    """The suspend policy applied to the catalog: an Evaluation to answer with (a refusal), or the tool and the
    policy outcome of a call that may run or suspends. Raises ApprovalRefused for arguments the schema refuses.
    A call that names its candidate set is looked up in that set's system (unless it names one) and may only call
    a tool of the set."""
    if system is None and claim is not None and claim.served is not None:
        system = claim.served.system
    view = gate_view(tool_name, system=system, profile=profile)
    if isinstance(view, Evaluation):
        return view
    tool = view.tool
    label = f"{tool.system}:{tool.declared_id}" if tool else repr(tool_name)
    outcome = suspend_policy(
        known=tool is not None,
        plan_eligible=view.plan_eligible,
        effective_policy_class=tool.effective_policy_class if tool else None,
        is_mutating=tool.is_mutating if tool else False,
        hitl_tier=tool.hitl_tier if tool else None,
        dispatch_mode=dispatch_mode,
        tool=label,
        profile=profile,
    )
    if outcome.decision == Decision.REFUSE:
        return _refused(outcome, tool)
    assert tool is not None
    if claim is not None:
        outside = candidate_set_refusal(
            set_id=claim.set_id,
            served=claim.served,
            profile=profile,
            tool_system=tool.system,
            tool_key=tool.canonical_key,
            tool=label,
        )
        if outside is not None:
            return _refused(outside, tool)
    _check_args(args, tool, label)
    return tool, outcome
