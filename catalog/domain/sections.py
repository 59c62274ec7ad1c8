"""What a revision changes in a system's configuration sections, entry by entry, classed as tool declarations are
(TOOLS.md, "What is in effect"): the revision page shows each with its badge. Pure: it reads the plain values
`catalog.services.config_sections` compares (`[slug, clinical, availabilities, includes]` per profile,
`[slug, trigger, tools]` per forced floor).

Profiles and forced floors decide what a clinical runtime is served (`catalog.selectors.served`): a clinical
profile's widening and a forced floor's removal, narrowing or move to another trigger wait for sign-off
(weakening); the rest takes effect at import (strengthening). Teams, ownership rules and agents route pages and
name who may call what, but no runtime reader serves from them: they take effect at import, unclassed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from catalog.domain.effect import STRENGTHENING, WEAKENING

GOVERNED_SECTIONS = ("profiles", "forcedFloors")


@dataclass(frozen=True)
class SectionEntry:
    section: str
    name: str  # the profile's or floor's id
    what: str  # a short, plain account: "availability + preview", "tools − listAllergies", "added", …
    klass: str | None  # weakening, strengthening; None: not governed


def _by_slug(values: Any) -> dict[str, list[Any]]:
    return {str(v[0]): list(v) for v in values or () if isinstance(v, Sequence) and v}


def _listed(what: str, sign: str, values: set[str]) -> str:
    return f"{what} {sign} {', '.join(sorted(values))}"


def _profile_entries(old: dict[str, list[Any]], new: dict[str, list[Any]]) -> list[SectionEntry]:
    entries = []
    for slug in sorted(old.keys() | new.keys()):
        before, after = old.get(slug), new.get(slug)
        if after is None:
            # A clinical profile cannot be dropped by import (refused); a staging one is not governed.
            entries.append(SectionEntry("profiles", slug, "removed", STRENGTHENING if before and before[1] else None))
            continue
        clinical = bool(after[1])
        if before is None:
            # A new clinical profile serves nothing before its first sign-off.
            entries.append(SectionEntry("profiles", slug, "added", WEAKENING if clinical else None))
            continue
        if bool(before[1]) != clinical:
            entries.append(SectionEntry("profiles", slug, f"clinical: {before[1]} → {clinical}", STRENGTHENING))
        for index, what in ((2, "availability"), (3, "include")):
            widened, narrowed = set(after[index]) - set(before[index]), set(before[index]) - set(after[index])
            if widened:
                entries.append(
                    SectionEntry("profiles", slug, _listed(what, "+", widened), WEAKENING if clinical else None)
                )
            if narrowed:
                klass = STRENGTHENING if clinical else None
                entries.append(SectionEntry("profiles", slug, _listed(what, "−", narrowed), klass))
    return entries


def _floor_entries(old: dict[str, list[Any]], new: dict[str, list[Any]]) -> list[SectionEntry]:
    entries = []
    for slug in sorted(old.keys() | new.keys()):
        before, after = old.get(slug), new.get(slug)
        if before is None or after is None:
            klass = STRENGTHENING if before is None else WEAKENING
            entries.append(SectionEntry("forcedFloors", slug, "added" if before is None else "removed", klass))
            continue
        if before[1] != after[1]:
            entries.append(SectionEntry("forcedFloors", slug, f"trigger {before[1]} → {after[1]}", WEAKENING))
        added, dropped = set(after[2]) - set(before[2]), set(before[2]) - set(after[2])
        if added:
            entries.append(SectionEntry("forcedFloors", slug, _listed("tools", "+", added), STRENGTHENING))
        if dropped:
            entries.append(SectionEntry("forcedFloors", slug, _listed("tools", "−", dropped), WEAKENING))
    return entries


def section_entries(section: str, old: Any, new: Any) -> list[SectionEntry]:
    """Each change a revision makes to one configuration section. Sections no runtime reader serves from give
    one unclassed entry saying it changed."""
    if section == "profiles":
        return _profile_entries(_by_slug(old), _by_slug(new))
    if section == "forcedFloors":
        return _floor_entries(_by_slug(old), _by_slug(new))
    return [SectionEntry(section, "", "changed", None)]
