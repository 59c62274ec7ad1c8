"""Sibling near-duplicate findings, refreshed after a system's vectors changed."""

from __future__ import annotations

from django.db import transaction

from catalog.models import CatalogState, Tool
from catalog.services.findings import findings_store, lint_view_from_db

RULE = "sibling-near-duplicate"


def sibling_findings_refresh(system: str) -> int:
    """Replace the system's sibling findings after its vectors changed. Takes the import's per-system lock, so a
    refresh and an import never interleave their writes to the findings."""
    with transaction.atomic():
        state = CatalogState.objects.select_for_update().filter(system=system).first()
        if state is None or state.current_revision is None:
            return 0
        pks = dict(Tool.objects.filter(system=system).live().values_list("declared_id", "pk"))
        return findings_store(
            view=lint_view_from_db(system), revision=state.current_revision, tool_pks=pks, only=[RULE]
        )
