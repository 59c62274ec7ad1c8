"""The findings step of an import: lint the manifest's catalog and store the result, keeping the sibling findings
the import did not decide.

Sibling near-duplicates come from the stored vectors, which the worker makes after the import commits. Scanning
every pair of a system's vectors in the import (N × N: 54 s of a 10-tool change to a 50,000-tool catalog) only
re-derived what was stored already, from vectors that were about to go stale. So the import keeps the stored
sibling findings of tools whose embedded text did not change and drops those involving a tool whose text changed
or that was retired; the worker re-embeds those and its refresh (`catalog.rag.services.siblings`) finds their
siblings again once their vectors are current.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from catalog.domain.manifest import Manifest
from catalog.domain.ownership import derive_owner
from catalog.models import CatalogRevision, Finding, OwnershipRule, Team
from catalog.services.findings import findings_store, lint_view_from_manifest

SIBLING_RULE = "sibling-near-duplicate"


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


def import_findings_store(
    manifest: Manifest,
    revision: CatalogRevision,
    teams: dict[str, Team],
    rule_index: dict[tuple[str, str], OwnershipRule],
    tool_pks: Mapping[str, int],
    sibling_stale: Collection[str],
) -> None:
    """Findings are recomputed here, in the import transaction, so listing them is a plain query."""
    team_slugs = {t.pk: t.slug for t in teams.values()}
    owners = {}
    for d in manifest.tools:
        rule = derive_owner(d.plane, d.module, rule_index)
        owners[d.declared_id] = team_slugs[rule.team_id] if rule else None
    view = lint_view_from_manifest(manifest, owners, kept_sibling_pairs(manifest.system, sibling_stale))
    findings_store(view=view, revision=revision, tool_pks=tool_pks, record_on=revision)
