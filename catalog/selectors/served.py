"""The configuration a runtime is served: each profile's availabilities and includes, and the forced floors, with
what awaits sign-off held back (TOOLS.md, "What is in effect"). The approvals gate, the effective-policy API,
resolve's index and the tool page read profiles and forced floors here, never from the rows an import writes.

An import replaces a system's profiles and forced floors at once (the newest import, what a non-clinical profile
sees); `CatalogState.signed_sections` keeps what the last sign-off put in effect. A clinical profile is served the
narrower of the two (widening waits, narrowing is at once); every profile is served the union of both forced floors
(dropping a forced tool waits, adding one is at once)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Max, Prefetch, Q

from catalog.domain.profiles import ForcedFloorRow, served_forced_floors, served_profile_part
from catalog.domain.vocabulary import ReviewState
from catalog.models import CatalogProfile, CatalogRevision, CatalogState, ForcedFloor, RevisionReview


@dataclass(frozen=True)
class ServedProfile:
    slug: str
    system: str
    clinical: bool
    availabilities: tuple[str, ...]
    includes: tuple[str, ...]


def _signed() -> dict[str, dict[str, Any]]:
    return {
        system: sections or {} for system, sections in CatalogState.objects.values_list("system", "signed_sections")
    }


def served_configuration() -> tuple[dict[str, ServedProfile], dict[str, list[ForcedFloorRow]]]:
    """The profiles (by slug) and every system's forced floors as they are served (three queries)."""
    signed = _signed()
    return served_profiles(signed), forced_floors(signed)


def served_profiles(signed: dict[str, dict[str, Any]] | None = None) -> dict[str, ServedProfile]:
    """Every catalog profile as it is served, by slug (two queries; one when `signed` is passed in)."""
    signed = _signed() if signed is None else signed
    return {p.slug: _served(p, signed) for p in CatalogProfile.objects.order_by("slug")}


def _served(p: CatalogProfile, signed: dict[str, dict[str, Any]]) -> ServedProfile:
    availabilities, includes = list(p.availabilities or ()), list(p.includes or ())
    if p.clinical:
        kept = (signed.get(p.system, {}).get("profiles") or {}).get(p.slug)
        availabilities = served_profile_part(availabilities, kept.get("availabilities") if kept else None)
        includes = served_profile_part(includes, kept.get("includes") if kept else None)
    return ServedProfile(p.slug, p.system, p.clinical, tuple(availabilities), tuple(includes))


def clinical_profile_slugs() -> list[str]:
    """The clinical profiles, by slug (one query). A profile's `clinical` flag never changes by import
    (catalog.domain.manifest refuses it), so the imported rows say it."""
    return list(CatalogProfile.objects.filter(clinical=True).order_by("slug").values_list("slug", flat=True))


def served_profile(slug: str) -> ServedProfile | None:
    """One profile as it is served (two small queries: the profile, its system's signed-off sections)."""
    found = CatalogProfile.objects.filter(slug=slug).first()
    if found is None:
        return None
    rows = CatalogState.objects.filter(system=found.system).values_list("system", "signed_sections")
    return _served(found, {system: sections or {} for system, sections in rows})


def forced_floors(signed: dict[str, dict[str, Any]] | None = None) -> dict[str, list[ForcedFloorRow]]:
    """Every system's forced floors as they are served (two queries; one when `signed` is passed in)."""
    signed = _signed() if signed is None else signed
    newest: dict[str, list[ForcedFloorRow]] = {}
    for floor in ForcedFloor.objects.order_by("system", "slug"):
        newest.setdefault(floor.system, []).append((floor.slug, floor.trigger, list(floor.tool_ids)))
    served: dict[str, list[ForcedFloorRow]] = {}
    for system, sections in signed.items():
        kept = sections.get("forcedFloors") or {}
        if newest.get(system) or kept:
            served[system] = served_forced_floors(newest.get(system, []), kept)
    return served


def signed_sections_now(system: str) -> dict[str, Any]:
    """The system's stored profiles and forced floors, as a sign-off records them in `signed_sections`."""
    return {
        "profiles": {
            p.slug: {"availabilities": list(p.availabilities or ()), "includes": list(p.includes or ())}
            for p in CatalogProfile.objects.filter(system=system)
        },
        "forcedFloors": {
            f.slug: {"trigger": f.trigger, "tools": list(f.tool_ids or ())}
            for f in ForcedFloor.objects.filter(system=system)
        },
    }


@dataclass(frozen=True)
class SignedOff:
    """Since when a system's catalog is served as it is: its newest approved revision (its approval put the
    declarations in effect), approved by whom, and when."""

    system: str
    revision: int | None  # None: nothing of the system was ever approved (a clinical profile is served none of it)
    automatic: bool  # approved at import: it weakened nothing
    by: tuple[str, ...]  # the safety officers whose approvals counted
    at: datetime | None  # the last counted approval, or the import of an automatic one


def signed_off(systems: Collection[str] | None = None) -> list[SignedOff]:
    """`SignedOff` for each of `systems` (default: every system imported at least once), by name (three queries
    whatever their number)."""
    revisions = CatalogRevision.objects.all() if systems is None else CatalogRevision.objects.filter(system__in=systems)
    approved = Q(review_state=ReviewState.APPROVED)
    newest = dict(
        revisions.values("system").annotate(number=Max("number", filter=approved)).values_list("system", "number")
    )
    wanted = Q(pk__in=[])
    for system, number in newest.items():
        if number is not None:
            wanted |= Q(system=system, number=number)
    reviews = Prefetch("reviews", queryset=RevisionReview.objects.select_related("reviewer"))
    found = {r.system: r for r in CatalogRevision.objects.filter(wanted).prefetch_related(reviews)} if newest else {}
    answer = []
    for system in sorted(newest if systems is None else systems):
        revision = found.get(system)
        if revision is None:
            answer.append(SignedOff(system, None, False, (), None))
            continue
        counted = _counted(list(revision.reviews.all()))
        at = counted[-1].created_at if counted else revision.created_at
        by = tuple(r.reviewer.get_username() for r in counted)
        answer.append(SignedOff(system, revision.number, revision.auto_approved, by, at))
    return answer


def _counted(reviews: list[RevisionReview]) -> list[RevisionReview]:
    """The approvals after the last request for changes, oldest first (catalog.selectors.reviews.counted_approvals,
    over reviews already read)."""
    reviews = sorted(reviews, key=lambda r: (r.created_at, r.pk))
    requested = [i for i, r in enumerate(reviews) if r.decision == RevisionReview.Decision.REQUEST_CHANGES]
    after = reviews[requested[-1] + 1 :] if requested else reviews
    return [r for r in after if r.decision == RevisionReview.Decision.APPROVE]
