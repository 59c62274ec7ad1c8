"""What a runtime is served, read through every reader that answers it: the approvals gate (`gate_view`, what
`evaluate` decides with), the effective-policy API (`effective_policies`), resolve's retrieval index (which tools a
profile retrieves over, and which are plan-eligible there), the telemetry ingest's index (which tool a reported
name ran, and what it was allowed to do) and the tool page's in-effect notice. `disagreements` lists every tool and
profile where two of them differ; the agreement tests assert there is none."""

from __future__ import annotations

from approvals.services.gate import Evaluation, gate_view
from catalog.models import CatalogProfile, Tool
from catalog.rag.embedders import get_embedder
from catalog.rag.selectors.index import rag_index
from catalog.selectors.effect import effective_policies
from catalog.selectors.signoff import tool_in_effect
from catalog.usage.catalog_index import UsageIndex, usage_index


def disagreements() -> list[str]:
    """`system:id under profile: what differs` for every live tool under every profile (empty: they agree)."""
    problems: list[str] = []
    index = rag_index(get_embedder().model_id)
    usage = usage_index()
    tools = list(Tool.objects.live().order_by("system", "declared_id"))
    for tool in tools:
        policy = effective_policies(profile="clinical-production", system=tool.system, declared_id=tool.declared_id)
        if (tool_in_effect(tool) is not None) != policy[0].awaiting_signoff:
            problems.append(f"{tool.system}:{tool.declared_id}: the tool page and the policy API disagree on awaiting")
    for profile in CatalogProfile.objects.order_by("slug"):
        policies = {(p.system, p.declared_id): p for p in effective_policies(profile=profile.slug)}
        indexed = index.profiles[profile.slug]
        retrieved: dict[str, dict[int, bool]] = {}  # system → the tools resolve serves, and their eligibility
        for system in {t.system for t in tools}:
            served = index.served(system, clinical=indexed.clinical)
            eligible = served.eligibility(indexed)[0] if served is not None else {}
            retrieved[system] = {t.pk: bool(eligible.get(t.key)) for t in (served.tools if served else [])}
        for tool in tools:
            where = f"{tool.system}:{tool.declared_id} under {profile.slug}"
            problems += _spellings_disagree(tool, profile.slug, indexed.clinical, usage, where)
            policy = policies[(tool.system, tool.declared_id)]
            view = gate_view(tool.declared_id, system=tool.system, profile=profile.slug)
            in_gate = not isinstance(view, Evaluation) and view.tool is not None
            in_rag = tool.pk in retrieved[tool.system]
            if not in_gate == in_rag == policy.in_effect:
                problems.append(f"{where}: served? gate {in_gate}, resolve {in_rag}, policy API {policy.in_effect}")
                continue
            if not policy.in_effect:
                continue
            assert not isinstance(view, Evaluation) and view.tool is not None
            gate = (view.tool.effective_policy_class, view.tool.hitl_tier, view.plan_eligible)
            api = (policy.effective_policy_class, policy.hitl_tier, policy.plan_eligible)
            if gate != api:
                problems.append(f"{where}: (class, tier, plan-eligible) gate {gate}, policy API {api}")
            if retrieved[tool.system][tool.pk] != policy.plan_eligible:
                problems.append(f"{where}: plan-eligible in resolve {not policy.plan_eligible}, policy API not")
            ref = usage.find(tool.declared_id, tool.system, clinical=indexed.clinical)
            told = ref.served(indexed.clinical) if ref is not None else None
            if told is None or (told.policy_class, told.hitl_tier) != api[:2]:
                problems.append(f"{where}: (class, tier) telemetry {told}, policy API {api[:2]}")
    return problems


def _spellings_disagree(tool: Tool, profile: str, clinical: bool, usage: UsageIndex, where: str) -> list[str]:
    """Every spelling the newest import gives the tool routes to it in the gate exactly where it does in the
    telemetry ingest (under a clinical profile, only the aliases in effect route)."""
    problems = []
    for name in [tool.declared_id, *(tool.aliases or [])]:
        view = gate_view(name, system=tool.system, profile=profile)
        in_gate = not isinstance(view, Evaluation) and view.tool is not None and view.tool.pk == tool.pk
        ref = usage.find(name, tool.system, clinical=clinical)
        in_usage = ref is not None and ref.pk == tool.pk and (not clinical or ref.clinical is not None)
        if in_gate != in_usage:
            problems.append(f"{where}: {name!r} routes to it? gate {in_gate}, telemetry {in_usage}")
    return problems
