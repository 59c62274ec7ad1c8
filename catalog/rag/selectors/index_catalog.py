"""What the retrieval index takes from the catalog, read again only for the tools that changed.

The index remembers, per system, the revision it read the catalog at (id, number, time). After an import it reads
only the tools the newer revisions touched (`last_changed_revision`, `retired_in` or `in_effect_revision` among
them: three indexed foreign keys), after a sign-off also the tools that awaited one; profiles and floors are small
and read whole. The count of live tools the current revision's import stored checks the result: any doubt (a
revision that is gone, as after a test's rollback, a count that differs, a new system) reads that system whole.
Fail closed: never a tool of a catalog that is no longer live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from catalog.models import CatalogRevision, Tool
from catalog.rag.domain.index import IndexedProfile
from catalog.selectors.served import served_configuration

Entry = tuple[Tool, dict[str, Any], str]  # (tool, the declaration served, the hash of its embedded text)


@dataclass(frozen=True)
class Mark:
    """The revision a system's tools were read at, and its last sign-off."""

    revision: int | None
    number: int
    created_at: object
    signed_off_at: object
    tool_count: int = -1  # the live tools its import counted (-1: no revision)


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
    # The pks of `newest` and `in_effect`, in their order (the same list object while the order holds).
    newest_pks: dict[str, list[int]] = field(default_factory=dict)
    in_effect_pks: dict[str, list[int] | None] = field(default_factory=dict)
    awaiting: dict[str, set[int]] = field(default_factory=dict)  # system → pks of the tools awaiting sign-off

    # id of one of the pk lists → (the list, each pk's place in it): computed once per list, handed on to the part
    # that keeps the list.
    places: dict[int, tuple[list[int], dict[int, int]]] = field(default_factory=dict)

    def positions(self, pks: list[int]) -> dict[int, int]:
        """Each pk's place in `pks` (one of this part's lists)."""
        found = self.places.get(id(pks))
        if found is None or found[0] is not pks:
            found = self.places[id(pks)] = (pks, {pk: n for n, pk in enumerate(pks)})
        return found[1]

    def keep_places(self, previous: CatalogPart, pks: list[int]) -> None:
        """`previous`'s places of `pks`, a list this part keeps."""
        self.places[id(pks)] = (pks, previous.positions(pks))


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
    # The check: as many live tools as the current revision's import counted in the transaction that changed them
    # (imports alone make or retire tools; read with the revisions, no query of its own).
    for system in [s for s in tools if len(tools[s]) != marks[s].tool_count]:
        del tools[system]
    whole = frozenset(marks) - set(tools)
    if whole:
        for tool in _select(Tool.objects.live().filter(system__in=sorted(whole))):
            tools.setdefault(tool.system, {})[tool.id] = tool
    for system in whole:
        tools.setdefault(system, {})
        changed[system] = set(tools[system])
    profiles, floors = served_configuration()
    part = CatalogPart(version, tools, {}, {}, floors, {}, {}, marks, changed, whole)
    for system, by_pk in tools.items():
        _views_of(part, system, by_pk, None if system in whole else previous)
    part.profiles.update(
        (p.slug, IndexedProfile(p.slug, p.system, list(p.availabilities), list(p.includes), p.clinical))
        for p in profiles.values()
    )
    part.revisions.update((system, mark.revision) for system, mark in marks.items())
    return part


def _views_of(part: CatalogPart, system: str, by_pk: dict[int, Tool], previous: CatalogPart | None) -> None:
    """The system's newest entries and what is in effect, from `previous`'s where the order holds: a changed tool
    that neither came nor went is replaced at its place (a copy of the list, no pass over the tools)."""
    changed = part.changed[system]
    before = previous.newest.get(system) if previous is not None else None
    before_pks = previous.newest_pks.get(system) if previous is not None else None
    if previous is None or before is None or before_pks is None or not _same_set(previous, system, by_pk, changed):
        order = sorted(by_pk.values(), key=lambda t: t.declared_id)
        part.newest[system] = [(t, t.declared(), t.rag_text_sha256) for t in order]
        part.newest_pks[system] = [t.id for t in order]
        part.awaiting[system] = {t.id for t in order if t.awaiting_signoff}
        _in_effect_whole(part, system)
        return
    positions = previous.positions(before_pks)
    part.keep_places(previous, before_pks)
    entries = list(before)
    awaiting = set(previous.awaiting[system])
    for pk in changed:
        t = by_pk[pk]
        entries[positions[pk]] = (t, t.declared(), t.rag_text_sha256)
        (awaiting.add if t.awaiting_signoff else awaiting.discard)(pk)
    part.newest[system], part.newest_pks[system], part.awaiting[system] = entries, before_pks, awaiting
    effect, effect_pks = previous.in_effect.get(system), previous.in_effect_pks.get(system)
    if effect is None and not previous.awaiting[system]:
        # Nothing awaited sign-off: every tool was in effect as declared (`awaits_signoff`), the newest list.
        effect, effect_pks = before, before_pks
    if not awaiting:  # clinical profiles retrieve over what is in effect: the same index when nothing awaits
        part.in_effect[system], part.in_effect_pks[system] = None, None
    elif effect is None or effect_pks is None or not all(_kept(previous, effect_pks, by_pk[pk]) for pk in changed):
        _in_effect_whole(part, system)
    else:
        at = previous.positions(effect_pks)
        part.keep_places(previous, effect_pks)
        effect = list(effect)
        for pk in changed:
            if pk in at:
                t = by_pk[pk]
                effect[at[pk]] = (t, t.in_effect or {}, t.in_effect_text_sha256)
        part.in_effect[system], part.in_effect_pks[system] = effect, effect_pks


def _same_set(previous: CatalogPart, system: str, by_pk: dict[int, Tool], changed: set[int]) -> bool:
    """Whether the tools are the previous part's with the same ids: every changed tool was there and still is
    (the others were not read again, so they are the same)."""
    before, before_pks = previous.newest[system], previous.newest_pks[system]
    if len(before_pks) != len(by_pk) or len(changed) * 2 > len(by_pk):
        return False
    positions = previous.positions(before_pks)
    return all(
        pk in positions and pk in by_pk and before[positions[pk]][0].declared_id == by_pk[pk].declared_id
        for pk in changed
    )


def _kept(previous: CatalogPart, effect_pks: list[int], tool: Tool) -> bool:
    """Whether the tool is in effect now exactly when it was (so the list keeps its members and order)."""
    return (tool.id in previous.positions(effect_pks)) == bool(tool.in_effect)


def _in_effect_whole(part: CatalogPart, system: str) -> None:
    if not part.awaiting[system]:
        part.in_effect[system], part.in_effect_pks[system] = None, None
        return
    effect: list[Entry] = [(t, t.in_effect, t.in_effect_text_sha256) for t, _, _ in part.newest[system] if t.in_effect]
    part.in_effect[system], part.in_effect_pks[system] = effect, [t.id for t, _, _ in effect]


Revisions = list[tuple[int, str, int, object, int]]  # (pk, system, number, created_at, tool_count)


def _revisions(version: Any, previous: CatalogPart | None) -> Revisions:
    """In one query: each system's current revision, and every revision since the one `previous` was read at."""
    query = Q(pk__in=[row[1] for row in version if row[1]])
    for system, mark in (previous.marks if previous is not None else {}).items():
        query |= Q(system=system, number__gte=mark.number)
    return list(CatalogRevision.objects.filter(query).values_list("pk", "system", "number", "created_at", "tool_count"))


def _mark(row: tuple[Any, ...], revisions: Revisions) -> Mark:
    number, count = next(((n, c) for pk, _, n, _, c in revisions if pk == row[1]), (0, -1))
    return Mark(row[1], number, row[2], row[3], count)


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
    newer = [(pk, number, at) for pk, name, number, at, _ in revisions if name == system and number >= before.number]
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
