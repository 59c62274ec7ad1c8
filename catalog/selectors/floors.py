"""Reading the tier floors: as plain domain values for the gate and the rules (kept per process, one small query
per use to see a change), and per floor with the tools it catches for the floors page."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Max

from catalog.domain.floors import Floor, floor_for, is_below
from catalog.domain.policy import is_mutating
from catalog.models import TierFloor, Tool

FloorsVersion = tuple[int, datetime | None]


def floors_version() -> FloorsVersion:
    """What names the floor table exactly: its row count and newest change (one aggregate query).

    Every change stamps `updated_at` with a later time and a removal lowers the count, so the same pair never
    names two different tables (a removal followed by an addition moves the newest time on)."""
    found = TierFloor.objects.aggregate(n=Count("id"), newest=Max("updated_at"))
    return (found["n"], found["newest"])


class _Kept:
    """The floors as of one version, rebuilt by the first caller that sees another version."""

    def __init__(self) -> None:
        self.value: tuple[FloorsVersion, tuple[Floor, ...]] | None = None
        self.lock = threading.Lock()


_kept = _Kept()


def tier_floors() -> tuple[Floor, ...]:
    """Every floor as a plain value, in the page's order. A change made by any process is seen by the next call
    in every process (the version is checked on each call; the rows are read again only when it moved)."""
    version = floors_version()
    kept = _kept.value
    if kept is not None and kept[0] == version:
        return kept[1]
    with _kept.lock:
        if _kept.value is None or _kept.value[0] != version:
            _kept.value = (version, _read_floors())
        return _kept.value[1]


def tier_floors_forget() -> None:
    """Drop the kept floors (tests that roll the database back may meet an old version again)."""
    _kept.value = None


def _read_floors() -> tuple[Floor, ...]:
    return tuple(as_floor(row) for row in _in_page_order(TierFloor.objects.all()))


def _in_page_order(rows: Iterable[TierFloor]) -> list[TierFloor]:
    """Domain floors first, then pattern floors, each alphabetically; a floor for both systems before one for one."""
    return sorted(rows, key=lambda r: (r.pattern != "", r.policy_domain, r.pattern, r.system))


def as_floor(row: TierFloor) -> Floor:
    return Floor(
        id=row.key,
        min_tier=row.min_tier,
        policy_domain=row.policy_domain or None,
        pattern=row.pattern or None,
        system=row.system or None,
        reason=row.reason,
        pk=row.pk,
    )


# --- the floors page ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaughtTool:
    system: str
    declared_id: str
    hitl_tier: str | None  # as declared
    below: bool  # a declared tier that falls short of this floor (the rule hitl-tier-below-floor)


@dataclass(frozen=True)
class FloorRow:
    floor: TierFloor
    caught: tuple[CaughtTool, ...]  # the live mutating tools it matches, by system and id

    @property
    def below_count(self) -> int:
        return sum(1 for t in self.caught if t.below)

    @property
    def undeclared_count(self) -> int:
        """Caught tools that declare no tier (mutate-without-hitl's findings): the gate applies the floor."""
        return sum(1 for t in self.caught if t.hitl_tier is None)


_TOOL_FIELDS = (
    "system",
    "declared_id",
    "llm_name",
    "canonical_key",
    "policy_domain",
    "module",
    "category",
    "mutating",
    "policy_class",
    "hitl_tier",
)


def floors_overview() -> list[FloorRow]:
    """Every floor with the live mutating tools it catches (as their newest import declares them): two queries
    whatever the number of floors or tools."""
    rows = _in_page_order(TierFloor.objects.select_related("created_by", "updated_by", "proposed_by"))
    tools = [
        t
        for t in Tool.objects.live().order_by("system", "declared_id").values(*_TOOL_FIELDS)
        if is_mutating(mutating=t["mutating"], policy_class=t["policy_class"])
    ]
    return [FloorRow(row, _caught_by(as_floor(row), tools)) for row in rows]


def _caught_by(floor: Floor, tools: list[dict[str, Any]]) -> tuple[CaughtTool, ...]:
    caught = []
    for t in tools:
        tier, _ = floor_for(
            declared_id=t["declared_id"],
            llm_name=t["llm_name"],
            canonical_key=t["canonical_key"],
            system=t["system"],
            policy_domain=t["policy_domain"],
            module=t["module"],
            category=t["category"],
            floors=(floor,),
        )
        if tier is not None:
            declared = t["hitl_tier"] or None
            below = declared is not None and is_below(declared, tier)
            caught.append(CaughtTool(t["system"], t["declared_id"], declared, below))
    return tuple(caught)
