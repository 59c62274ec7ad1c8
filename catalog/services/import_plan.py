"""What an import does to a system's tools, worked out from the manifest and the stored rows before anything is
written (catalog.services.imports writes it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catalog.domain.descriptor import Descriptor
from catalog.domain.diff import field_changes
from catalog.domain.manifest import Manifest
from catalog.models import Tool
from catalog.rag.domain.text import rag_text_hash

FieldChanges = dict[str, list[Any]]  # {field: [old, new]} of one tool


@dataclass
class ToolPlan:
    """What an import does to a system's tools, worked out from the manifest before anything is written."""

    added: list[tuple[Descriptor, FieldChanges]] = field(default_factory=list)  # ids the system never had
    revived: list[tuple[Tool, Descriptor, FieldChanges]] = field(default_factory=list)  # retired, declared again
    updated: list[tuple[Tool, Descriptor, FieldChanges]] = field(default_factory=list)  # live, declaration changed
    retiring: list[Tool] = field(default_factory=list)  # live, absent from the manifest
    text_changed: set[str] = field(default_factory=set)  # revived or updated ids whose embedded text changed

    @property
    def empty(self) -> bool:
        return not (self.added or self.revived or self.updated or self.retiring)

    @property
    def sibling_stale(self) -> set[str]:
        """Declared ids whose stored sibling findings this import drops: their vector is about to change."""
        return self.text_changed | {t.declared_id for t in self.retiring}


def tools_plan(manifest: Manifest, system: str) -> tuple[ToolPlan, dict[str, int]]:
    """Sort the manifest's tools against the system's stored ones (retired ones included): added, revived,
    updated (content hash differs), and the live ones to retire. Returns the plan and every stored tool's pk by
    declared id. The comparison reads three columns of every stored tool and whole rows only of those the import
    changes: reading 50,000 whole rows to find 10 changed ones took 1.6 s of a 10-tool change."""
    plan = ToolPlan()
    stored = {
        row[0]: row[1:]
        for row in Tool.objects.filter(system=system).values_list("declared_id", "pk", "content_hash", "retired_in")
    }
    candidates: list[tuple[Descriptor, int]] = []
    seen: set[str] = set()
    for descriptor in manifest.tools:
        seen.add(descriptor.declared_id)
        row = stored.get(descriptor.declared_id)
        if row is None:
            plan.added.append((descriptor, field_changes({}, descriptor.declared())))
        elif row[2] is not None or row[1] != descriptor.content_hash():
            candidates.append((descriptor, row[0]))
    retiring = [pk for declared_id, (pk, _, retired) in stored.items() if declared_id not in seen and retired is None]
    whole = tools_by_pk([pk for _, pk in candidates] + retiring)
    for descriptor, pk in candidates:
        tool = whole[pk]
        changes = field_changes(tool.declared(), descriptor.declared())
        (plan.revived if tool.retired_in_id is not None else plan.updated).append((tool, descriptor, changes))
        if tool.rag_text_sha256 != rag_text_hash(descriptor.rag_description, descriptor.rag_keywords):
            plan.text_changed.add(descriptor.declared_id)
    plan.retiring = [whole[pk] for pk in retiring]
    return plan, {declared_id: row[0] for declared_id, row in stored.items()}


def tools_by_pk(pks: list[int]) -> dict[int, Tool]:
    """Whole tool rows by pk, a bounded IN list per query."""
    tools: dict[int, Tool] = {}
    for start in range(0, len(pks), 2000):
        tools.update({t.pk: t for t in Tool.objects.filter(pk__in=pks[start : start + 2000])})
    return tools
