"""Plan eligibility of a tool under a catalog profile."""

from __future__ import annotations

from collections.abc import Collection

from catalog.domain.vocabulary import Availability, Plane


def is_plan_eligible(
    *,
    plane: str,
    availability: str,
    declared_id: str,
    profile_availabilities: Collection[str],
    profile_includes: Collection[str],
) -> bool:
    """Only business tools are plan-eligible, and only when the profile makes them active."""
    if plane != Plane.BUSINESS:
        return False
    return availability in profile_availabilities or declared_id in profile_includes


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
