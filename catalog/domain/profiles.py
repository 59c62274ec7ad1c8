"""Plan eligibility of a tool under a catalog profile, and the profile and forced floors served while a change of
them awaits sign-off."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from catalog.domain.vocabulary import Availability, Plane


def is_plan_eligible(
    *,
    plane: str,
    availability: str,
    declared_id: str,
    profile_availabilities: Collection[str],
    profile_includes: Collection[str],
    same_system: bool,
) -> bool:
    """Only business tools are plan-eligible, and only when the profile makes them active. A profile's includes name
    tools of its own system (the importer checks them against its manifest): another system's tool of the same id is
    not included (`same_system` False), or a preview MCP tool could become active under a clinical profile."""
    if plane != Plane.BUSINESS:
        return False
    return availability in profile_availabilities or (same_system and declared_id in profile_includes)


class ProfileView(Protocol):
    """What eligibility needs of a profile (the served profile, the gate's and resolve's copies of it)."""

    @property
    def system(self) -> str: ...

    @property
    def availabilities(self) -> Collection[str]: ...

    @property
    def includes(self) -> Collection[str]: ...


def plan_eligible_under(profile: ProfileView, *, plane: str, availability: str, declared_id: str, system: str) -> bool:
    """`is_plan_eligible` of a tool of `system` under `profile`: every reader of what is served asks this."""
    return is_plan_eligible(
        plane=plane,
        availability=availability,
        declared_id=declared_id,
        profile_availabilities=profile.availabilities,
        profile_includes=profile.includes,
        same_system=system == profile.system,
    )


def served_profile_part(newest: Sequence[str], signed: Sequence[str] | None) -> list[str]:
    """A clinical profile's availabilities (or includes) as served: the newest import's, narrowed at once to those
    signed off (a widening waits for sign-off; a profile never signed off makes nothing active yet)."""
    kept = set(signed or ())
    return [value for value in newest if value in kept]


ForcedFloorRow = tuple[str, str, list[str]]  # (slug, trigger, tool ids)


def served_forced_floors(newest: Sequence[ForcedFloorRow], signed: Mapping[str, Any]) -> list[ForcedFloorRow]:
    """The forced floors as served: every floor of the newest import or of the last sign-off, each with the tools of
    both (removing a tool from a floor, or a floor, waits for sign-off; adding takes effect at once). A floor whose
    trigger changed is served under both triggers until sign-off (the signed-off trigger with its signed-off tools):
    a floor that no longer fires where it did is a removal. In (slug, trigger) order."""
    merged: dict[tuple[str, str], ForcedFloorRow] = {
        (slug, trigger): (slug, trigger, list(tools)) for slug, trigger, tools in newest
    }
    for slug, floor in signed.items():
        trigger = str(floor.get("trigger", ""))
        tools = [t for t in floor.get("tools") or () if isinstance(t, str)]
        if (slug, trigger) in merged:
            kept = merged[slug, trigger][2]
            kept.extend(t for t in tools if t not in kept)
        else:
            merged[slug, trigger] = (slug, trigger, tools)
    return [merged[key] for key in sorted(merged)]


def is_active(
    *, availability: str, declared_id: str, profile_availabilities: Collection[str], profile_includes: Collection[str]
) -> bool:
    """Whether a tool exists at all under a profile (any plane)."""
    return availability in profile_availabilities or declared_id in profile_includes


def non_production_active(
    tools: Collection[tuple[str, str]],
    *,
    profile_availabilities: Collection[str],
    profile_includes: Collection[str],
) -> list[str]:
    """Declared ids of non-production tools active under a profile; `tools` holds (id, availability).

    Under a clinical profile any hit is a boot failure, not a logged anomaly.
    """
    return sorted(
        tool_id
        for tool_id, availability in tools
        if availability != Availability.PRODUCTION
        and is_active(
            availability=availability,
            declared_id=tool_id,
            profile_availabilities=profile_availabilities,
            profile_includes=profile_includes,
        )
    )


def clinical_profile_problems(stored_clinical: Collection[str], declared: Sequence[tuple[str, bool]]) -> list[str]:
    """What a manifest may not do to the system's clinical profiles (`stored_clinical`, by id) on its own: make one
    non-clinical, or drop it. Either would switch the gate off for the runtime that runs under it (what it is
    served, the boot gate) at import time, with no safety officer involved. `declared` holds the manifest's
    (profile id, clinical) in its order. Until such a change can be proposed and signed off, it is refused (fail
    closed): a located problem for each."""
    problems: list[str] = []
    seen: set[str] = set()
    for i, (profile_id, clinical) in enumerate(declared):
        seen.add(profile_id)
        if profile_id in stored_clinical and not clinical:
            problems.append(
                f"profiles[{i}].clinical: {profile_id} is a clinical profile; an import cannot make it non-clinical "
                "(declare clinical: true, or remove it from the source with a safety officer's decision)"
            )
    for profile_id in sorted(set(stored_clinical) - seen):
        problems.append(
            f"profiles: the clinical profile {profile_id} is missing; an import cannot remove a clinical profile "
            "(declare it again)"
        )
    return problems
