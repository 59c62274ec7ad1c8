"""What the retrieval index takes from the catalog, read again only for the tools that changed.

The index remembers, per system, the revision it read the catalog at (id, number, time). After an import it reads
only the tools the newer revisions touched (`last_changed_revision`, `retired_in` or `in_effect_revision` among
them: three indexed foreign keys), after a sign-off also the tools that awaited one; profiles and floors are small
and read whole. A count of each system's live tools checks the result: any doubt (a revision that is gone, as after
a test's rollback, a count that differs, a new system) reads that system whole. Fail closed: never a tool of a
catalog that is no longer live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q

from catalog.models import CatalogProfile, CatalogRevision, ForcedFloor, Tool
from catalog.rag.domain.index import IndexedProfile

Entry = tuple[Tool, dict[str, Any], str]  # (tool, the declaration served, the hash of its embedded text)


@dataclass(frozen=True)
class Mark:
    """The revision a system's tools were read at, and its last sign-off."""

    revision: int | None
    number: int
    created_at: object
    signed_off_at: object


@dataclass(frozen=True)
class CatalogPart:
    """What the index takes from the catalog (not from the vectors)."""

    version: object
    tools: dict[str, dict[int, Tool]]  # system → live tools by pk
    newest: dict[str, list[Entry]]  # system → entries in declared-id order
    in_effect: dict[str, list[Entry] | None]  # None: the same as the newest
    floors: dict[str, list[tuple[str, str, list[str]]]]
    revisions: dict[str, object]
    profiles: dict[str, IndexedProfile]
    marks: dict[str, Mark]
    changed: dict[str, set[int]]  # system → pks read again since the previous part (every pk when read whole)
    whole: frozenset[str]  # systems read whole


def read_catalog(version: Any, previous: CatalogPart | None = None) -> CatalogPart:
    """The catalog part at `version` (catalog_version()'s rows), reusing `previous` for tools that did not change."""
    revisions = _revisions(version, previous)
    marks = {str(row[0]): _mark(row, revisions) for row in version}
    tools: dict[str, dict[int, Tool]] = {}
    changed: dict[str, set[int]] = {}
    for system, mark in marks.items():
        kept = _updated(system, mark, previous, revisions) if previous is not None else None
        if kept is not None:
            tools[system], changed[system] = kept
    if tools:  # the check: as many live tools as a count says (one query, over an index)
        counts = dict(Tool.objects.live().values_list("system").annotate(n=Count("pk")).order_by())
        for system in [s for s in tools if len(tools[s]) != counts.get(s, 0)]:
            del tools[system]
    whole = frozenset(marks) - set(tools)
    if whole:
        for tool in _select(Tool.objects.live().filter(system__in=sorted(whole))):
            tools.setdefault(tool.system, {})[tool.id] = tool
    for system in whole:
        tools.setdefault(system, {})
        changed[system] = set(tools[system])
    newest: dict[str, list[Entry]] = {}
    in_effect: dict[str, list[Entry] | None] = {}
    for system, by_pk in tools.items():
        newest[system] = _entries(by_pk, changed[system], previous.newest.get(system, []) if previous else [])
        ordered = [entry[0] for entry in newest[system]]
        # Clinical profiles retrieve over what is in effect; the same index when nothing awaits sign-off.
        awaiting = any(t.awaiting_signoff for t in ordered)
        in_effect[system] = (
            [(t, t.in_effect, t.in_effect_text_sha256) for t in ordered if t.in_effect] if awaiting else None
        )
    profiles = {
        p.slug: IndexedProfile(p.slug, p.system, list(p.availabilities), list(p.includes), p.clinical)
        for p in CatalogProfile.objects.all()
    }
    current: dict[str, object] = {system: mark.revision for system, mark in marks.items()}
    return CatalogPart(version, tools, newest, in_effect, _floors(), current, profiles, marks, changed, whole)


def _entries(by_pk: dict[int, Tool], changed: set[int], before: list[Entry]) -> list[Entry]:
    """The system's entries in declared-id order; an unchanged tool's entry (and the order, when no tool came or
    went) is taken from the previous part: at 50,000 tools a declaration per tool costs more than the change."""
    kept = {entry[0].id: entry for entry in before}
    same_ids = all(kept[pk][0].declared_id == by_pk[pk].declared_id for pk in changed if pk in kept and pk in by_pk)
    if same_ids and len(kept) == len(by_pk) and all(pk in kept for pk in by_pk):
        order = [entry[0].id for entry in before]
    else:
        order = [t.id for t in sorted(by_pk.values(), key=lambda t: t.declared_id)]
    return [
        kept[pk] if pk in kept and pk not in changed else (by_pk[pk], by_pk[pk].declared(), by_pk[pk].rag_text_sha256)
        for pk in order
    ]


Revisions = list[tuple[int, str, int, object]]  # (pk, system, number, created_at)


def _revisions(version: Any, previous: CatalogPart | None) -> Revisions:
    """In one query: each system's current revision, and every revision since the one `previous` was read at."""
    query = Q(pk__in=[row[1] for row in version if row[1]])
    for system, mark in (previous.marks if previous is not None else {}).items():
        query |= Q(system=system, number__gte=mark.number)
    return list(CatalogRevision.objects.filter(query).values_list("pk", "system", "number", "created_at"))


def _mark(row: tuple[Any, ...], revisions: Revisions) -> Mark:
    number = next((n for pk, _, n, _ in revisions if pk == row[1]), 0)
    return Mark(row[1], number, row[2], row[3])


def _select(queryset: Any) -> list[Tool]:
    return list(queryset.select_related("last_changed_revision").order_by())


def _updated(
    system: str, mark: Mark, previous: CatalogPart, revisions: Revisions
) -> tuple[dict[int, Tool], set[int]] | None:
    """The system's live tools from `previous` with the tools changed since re-read; None: read it whole."""
    before = previous.marks.get(system)
    if before is None or system not in previous.tools or before.revision is None:
        return None
    # The revision the previous part was read at must still be there, unchanged (a rollback can reuse ids).
    newer = [(pk, number, at) for pk, name, number, at in revisions if name == system and number >= before.number]
    if (before.revision, before.number, before.created_at) not in newer:
        return None
    since = [pk for pk, number, _ in newer if number > before.number]
    query = Q(last_changed_revision_id__in=since) | Q(retired_in_id__in=since) | Q(in_effect_revision_id__in=since)
    kept = previous.tools[system]
    if mark.signed_off_at != before.signed_off_at:  # a sign-off changes what is in effect of the tools awaiting it
        query |= Q(pk__in=[pk for pk, t in kept.items() if t.awaiting_signoff])
    if not since and mark.signed_off_at == before.signed_off_at:
        return dict(kept), set()
    tools = dict(kept)
    touched: set[int] = set()
    for tool in _select(Tool.objects.filter(query, system=system)):
        touched.add(tool.id)
        if tool.retired_in_id is None:
            tools[tool.id] = tool
        else:
            tools.pop(tool.id, None)
    return tools, touched


def _floors() -> dict[str, list[tuple[str, str, list[str]]]]:
    floors: dict[str, list[tuple[str, str, list[str]]]] = {}
    for floor in ForcedFloor.objects.order_by("system", "slug"):
        floors.setdefault(floor.system, []).append((floor.slug, floor.trigger, list(floor.tool_ids)))
    return floors
