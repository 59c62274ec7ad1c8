"""What the runtime is allowed to do: each live tool's effective policy under a profile (TOOLS.md, "What is in
effect"). Clinical profiles are served what is in effect; HITL tier floors apply to every mutating tool."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from catalog.core.cache import catalog_version
from catalog.domain.descriptor import DECLARED_FIELDS
from catalog.domain.effect import declaration_for, floored_tier
from catalog.domain.floors import floor_for_inputs
from catalog.domain.keys import llm_name
from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating
from catalog.domain.profiles import plan_eligible_under
from catalog.models import CatalogProfile, Tool
from catalog.selectors.floors import floors_version, tier_floors
from catalog.selectors.served import ServedProfile, served_profile


def clinical_profiles_exist() -> bool:
    return CatalogProfile.objects.filter(clinical=True).exists()


class UnknownProfile(Exception):
    """The profile is not a catalog profile; the text lists the known ones."""


@dataclass(frozen=True)
class ToolPolicy:
    system: str
    declared_id: str
    in_effect: bool  # False: never signed off, so it does not exist under this (clinical) profile
    effective_policy_class: str | None
    hitl_tier: str | None  # floors applied
    declared_hitl_tier: str | None
    floors: tuple[str, ...]  # the floors that raise it
    retry_class: str | None  # never "transient" for a mutating tool
    plan_eligible: bool
    revision_in_effect: int | None
    awaiting_signoff: bool  # a newer declaration waits for sign-off
    newest_revision: int


def policy_etag(profile: str, *, system: str | None = None, declared_id: str | None = None) -> str:
    """Changes whenever an import, a sign-off or a floor changes what any tool's policy may be (two small queries)."""
    key = repr((catalog_version(), floors_version(), profile, system, declared_id))
    return '"' + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32] + '"'


def effective_policies(*, profile: str, system: str | None = None, declared_id: str | None = None) -> list[ToolPolicy]:
    """Every live tool's policy under `profile` (of one system, or one tool): three queries whatever the size."""
    found = served_profile(profile)
    if found is None:
        known = ", ".join(CatalogProfile.objects.order_by("slug").values_list("slug", flat=True)) or "none"
        raise UnknownProfile(f"profile: {profile!r} is not a catalog profile (known: {known})")
    tools = Tool.objects.live().order_by("system", "declared_id")
    if system:
        tools = tools.filter(system=system)
    if declared_id:
        tools = tools.filter(declared_id=declared_id)
    rows = tools.values(
        "system",
        "declared_id",
        "canonical_key",
        "in_effect",
        "awaiting_signoff",
        "in_effect_revision__number",
        "last_changed_revision__number",
        *DECLARED_FIELDS,
    )
    floors = tier_floors()
    return [_policy(row, found, floors) for row in rows]


def _policy(row: dict[str, Any], profile: ServedProfile, floors: Any) -> ToolPolicy:
    declared = {name: row[name] for name in DECLARED_FIELDS}
    served = declaration_for(clinical=profile.clinical, declared=declared, in_effect=row["in_effect"])
    common = {
        "system": row["system"],
        "declared_id": row["declared_id"],
        "awaiting_signoff": row["awaiting_signoff"],
        "newest_revision": row["last_changed_revision__number"],
        "revision_in_effect": (
            row["in_effect_revision__number"] if profile.clinical else row["last_changed_revision__number"]
        ),
    }
    if served is None:
        return ToolPolicy(
            **common,
            in_effect=False,
            effective_policy_class=None,
            hitl_tier=None,
            declared_hitl_tier=None,
            floors=(),
            retry_class=None,
            plan_eligible=False,
        )
    return ToolPolicy(**common, in_effect=True, **_served_policy(row, served, profile, floors))


def served_policy(
    row: Mapping[str, Any], served: Mapping[str, Any], floors: Any, *, proposed: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The derived policy of one served declaration (`served`, of the tool `row`): effective class, tier with the
    floors applied, retry class. What the gate, the effective-policy API and the telemetry checks compare against.
    `proposed`: the newest declaration where a clinical profile is served `served` instead; the floors its inputs
    match apply too (`floor_for_inputs`)."""
    mutating, policy_class = bool(served["mutating"]), served["policy_class"]
    declared_tier = served["hitl_tier"]
    tier: str | None = declared_tier
    matched: tuple[str, ...] = ()
    if is_mutating(mutating=mutating, policy_class=policy_class):
        floor, matched = floor_for_inputs(
            declared_id=row["declared_id"],
            llm_name=llm_name(row["declared_id"]),
            canonical_key=row["canonical_key"],
            system=row["system"],
            inputs=[(d["policy_domain"], d["module"], d["category"]) for d in (served, proposed) if d is not None],
            floors=floors,
        )
        tier = floored_tier(declared_tier, floor)
    return {
        "effective_policy_class": effective_policy_class(mutating=mutating, policy_class=policy_class),
        "hitl_tier": tier,
        "declared_hitl_tier": declared_tier,
        "floors": tuple(matched),
        "retry_class": effective_retry_class(
            mutating=mutating, policy_class=policy_class, retry_class=served["retry_class"]
        ),
    }


def _served_policy(
    row: Mapping[str, Any], served: Mapping[str, Any], profile: ServedProfile, floors: Any
) -> dict[str, Any]:
    # What awaits sign-off differs from what is served: its floors apply too (nothing else does: one floor match).
    proposed = {name: row[name] for name in DECLARED_FIELDS} if profile.clinical and row["awaiting_signoff"] else None
    return {
        **served_policy(row, served, floors, proposed=proposed),
        "plan_eligible": plan_eligible_under(
            profile,
            plane=served["plane"],
            availability=served["availability"],
            declared_id=row["declared_id"],
            system=row["system"],
        ),
    }
