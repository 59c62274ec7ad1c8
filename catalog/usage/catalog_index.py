"""The live catalog as the telemetry ingest reads it: each tool under every spelling the runtime may call it by, with
what is in effect for clinical and for other profiles (floors applied), and which profiles are clinical.

Rebuilt when the catalog (an import, a sign-off) or the tier floors change; otherwise one small query per use each.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from catalog.core.cache import Version, catalog_version
from catalog.domain.descriptor import DECLARED_FIELDS
from catalog.domain.effect import declaration_for
from catalog.domain.keys import canonical_key
from catalog.domain.mcp import client_spellings
from catalog.domain.policy import is_mutating
from catalog.domain.vocabulary import mcp_server_of
from catalog.models import CatalogProfile, Tool
from catalog.selectors.effect import served_policy
from catalog.selectors.floors import FloorsVersion, floors_version, tier_floors
from catalog.usage.domain.safety import Served, ToolRef


@dataclass
class UsageIndex:
    version: tuple[Version, FloorsVersion]
    by_key: dict[str, list[ToolRef]] = field(default_factory=dict)
    # Under clinical profiles a tool is called by the aliases in effect (an added or moved spelling waits for
    # sign-off, as in the approvals gate: approvals/catalog_index.py).
    by_key_in_effect: dict[str, list[ToolRef]] = field(default_factory=dict)
    clinical_profiles: frozenset[str] = frozenset()
    profiles: frozenset[str] = frozenset()

    def find(self, name: str, system: str = "", *, clinical: bool = False) -> ToolRef | None:
        """The tool `name` calls (any spelling: declared id, LLM name, alias, MCP client name; under a clinical
        profile only the aliases in effect). Several systems with the name: the one `system` names, else the first
        by system (the runtime should stamp condor.system). Two tools whose ids share a canonical key
        (`show-notification-banner`, `show_notification_banner`): the one declared by exactly that id, as in the
        approvals gate."""
        found = (self.by_key_in_effect if clinical else self.by_key).get(canonical_key(name), [])
        if system:
            found = [t for t in found if t.system == system] or found
        exact = [t for t in found if t.declared_id == name]
        return exact[0] if exact else found[0] if found else None

    def is_clinical(self, profile: str) -> bool:
        """Fail closed: a profile the span does not name, or that the catalog does not know, counts as clinical."""
        return profile not in self.profiles or profile in self.clinical_profiles


def _served(
    row: dict[str, Any], declared: dict[str, Any] | None, floors: Any, proposed: dict[str, Any] | None = None
) -> Served | None:
    if declared is None:
        return None
    policy = served_policy(row, declared, floors, proposed=proposed)
    return Served(
        policy_class=policy["effective_policy_class"],
        hitl_tier=policy["hitl_tier"],
        retry_class=policy["retry_class"],
        mutating=is_mutating(mutating=bool(declared["mutating"]), policy_class=declared["policy_class"]),
    )


def _build(version: tuple[Version, FloorsVersion]) -> UsageIndex:
    floors = tier_floors()
    index = UsageIndex(version)
    rows = Tool.objects.live().order_by("system", "declared_id")
    fields = ("pk", "system", "declared_id", "canonical_key", "aliases", "in_effect", "awaiting_signoff")
    for row in rows.values(*fields, *DECLARED_FIELDS):
        declared = {name: row[name] for name in DECLARED_FIELDS}
        newest = _served(row, declared, floors)
        assert newest is not None
        in_effect = declaration_for(clinical=True, declared=declared, in_effect=row["in_effect"])
        ref = ToolRef(
            pk=row["pk"],
            system=row["system"],
            declared_id=row["declared_id"],
            canonical_key=row["canonical_key"],
            plane=row["plane"],
            newest=newest,
            clinical=_served(
                row,
                dict(in_effect) if in_effect is not None else None,
                floors,
                proposed=declared if row["awaiting_signoff"] else None,
            ),
        )
        own = {ref.canonical_key}
        server = mcp_server_of(ref.system)
        if server:
            own |= {canonical_key(name) for name in client_spellings(server, ref.declared_id)}
        keys = own | {canonical_key(a) for a in row["aliases"] or []}
        for key in keys:
            index.by_key.setdefault(key, []).append(ref)
        if row["awaiting_signoff"]:  # the aliases in effect; otherwise they are the newest import's
            keys = own | {canonical_key(a) for a in (row["in_effect"] or {}).get("aliases") or []}
        for key in keys:
            index.by_key_in_effect.setdefault(key, []).append(ref)
    profiles = list(CatalogProfile.objects.values_list("slug", "clinical"))
    index.profiles = frozenset(slug for slug, _ in profiles)
    index.clinical_profiles = frozenset(slug for slug, clinical in profiles if clinical)
    return index


_lock = threading.Lock()
_kept: list[UsageIndex] = []


def usage_index() -> UsageIndex:
    version = (catalog_version(), floors_version())
    if _kept and _kept[0].version == version:
        return _kept[0]
    with _lock:
        if not _kept or _kept[0].version != version:
            _kept[:] = [_build(version)]
        return _kept[0]


def forget() -> None:
    """Drop the index (tests that roll the database back reuse revision ids)."""
    _kept.clear()
