"""The findings step of an import: lint the manifest's catalog and store the result, keeping the sibling findings
the import did not decide, and (when the rules' code is unchanged) the local rules' findings of the tools it did
not change.

Sibling near-duplicates come from the stored vectors, which the worker makes after the import commits. Scanning
every pair of a system's vectors in the import (N × N: 54 s of a 10-tool change to a 50,000-tool catalog) only
re-derived what was stored already, from vectors that were about to go stale. So the import keeps the stored
sibling findings of tools whose embedded text did not change and drops those involving a tool whose text changed
or that was retired; the worker re-embeds those and its refresh (`catalog.rag.services.siblings`) finds their
siblings again once their vectors are current.

The tool-local rules (`Rule.local`) are linted only for the tools the import changed (and, for the names the
manipulation rule reads, the tools whose texts mention a name that came, went or moved): 4 s of a 10-tool change
to 50,000 tools was the lint of the 49,990 others, whose findings it could not change. Fail closed: a first
import, rules' code other than the one that made the stored findings, an MCP catalog (its texts are read against
other catalogs' names), changed ownership or teams (owners), or a change to most of the catalog lint everything.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from catalog.domain.manifest import Manifest
from catalog.domain.ownership import derive_owner
from catalog.domain.rules.scope import lint_fingerprint, mentioning, moved_names, tool_names
from catalog.domain.vocabulary import mcp_server_of
from catalog.models import CatalogRevision, Finding, OwnershipRule, Team
from catalog.services.findings import findings_store, lint_view_from_manifest
from catalog.services.import_plan import ToolPlan

SIBLING_RULE = "sibling-near-duplicate"
# Above this many tools to re-lint, the whole lint is as cheap as reading the scope's stored findings by id.
SCOPE_MAX = 5000


def kept_sibling_pairs(system: str, stale: Collection[str]) -> list[tuple[str, str, float]]:
    """(a, b, cosine) of the system's stored sibling findings whose two tools are both outside `stale` (declared
    ids whose embedded text changed, or that were retired), one query."""
    pairs: dict[tuple[str, str], float] = {}
    rows = Finding.objects.filter(system=system, rule=SIBLING_RULE, tool__isnull=False)
    for this, details in rows.values_list("tool__declared_id", "details"):
        other = (details or {}).get("other")
        if not other or this in stale or other in stale:
            continue
        a, b = sorted((this, other))
        pairs[(a, b)] = float(details.get("cosine", 0.0))
    return [(a, b, cosine) for (a, b), cosine in sorted(pairs.items())]


def lint_scope(
    manifest: Manifest, plan: ToolPlan, latest: CatalogRevision | None, config_changes: Mapping[str, Any]
) -> frozenset[str] | None:
    """The declared ids whose local-rule findings this import must lint again, or None: lint every tool."""
    if latest is None or latest.lint_fingerprint != lint_fingerprint() or mcp_server_of(manifest.system):
        return None
    if {"ownership", "teams"} & set(config_changes):
        return None
    changed = [t for t, _, _ in plan.revived + plan.updated] + plan.retiring
    scope = {d.declared_id for d, _ in plan.added} | {t.declared_id for t in changed}
    if len(scope) > min(SCOPE_MAX, len(manifest.tools) // 2):
        return None
    after = tool_names((d.declared_id, d.aliases) for d in manifest.tools)
    before_tools = {d.declared_id: d.aliases for d in manifest.tools if d.declared_id not in scope}
    before_tools.update({t.declared_id: t.aliases or [] for t in changed if t.retired_in_id is None})
    moved = moved_names(tool_names(before_tools.items()), after)
    if any(not name.isascii() for name in moved):
        return None
    scope |= mentioning((d for d in manifest.tools if d.declared_id not in scope), moved)
    return frozenset(scope) if len(scope) <= SCOPE_MAX else None


def import_findings_store(
    manifest: Manifest,
    revision: CatalogRevision,
    teams: dict[str, Team],
    rule_index: dict[tuple[str, str], OwnershipRule],
    tool_pks: Mapping[str, int],
    sibling_stale: Collection[str],
    only_tools: frozenset[str] | None = None,
) -> None:
    """Findings are recomputed here, in the import transaction, so listing them is a plain query. `only_tools`:
    `lint_scope`'s answer (the revision was created with the fingerprint of the rules' code that runs here)."""
    team_slugs = {t.pk: t.slug for t in teams.values()}
    owners = {}
    for d in manifest.tools:
        rule = derive_owner(d.plane, d.module, rule_index)
        owners[d.declared_id] = team_slugs[rule.team_id] if rule else None
    view = lint_view_from_manifest(manifest, owners, kept_sibling_pairs(manifest.system, sibling_stale))
    findings_store(view=replace(view, only_tools=only_tools), revision=revision, tool_pks=tool_pks, record_on=revision)
