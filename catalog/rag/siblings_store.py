"""Sibling near-duplicate findings from stored vectors (the `sibling-near-duplicate` rule's input)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from catalog.models import CatalogState, Tool
from catalog.rag.siblings import near_duplicate_pairs
from catalog.rag.vectors import current_vectors

RULE = "sibling-near-duplicate"


def sibling_pairs_for(system: str) -> list[tuple[str, str, float]]:
    """(declared id a, declared id b, cosine) of the system's live tools whose current vectors collide."""
    pks, matrix = current_vectors(system)
    if len(pks) < 2:
        return []
    declared = dict(Tool.objects.filter(pk__in=pks).values_list("pk", "declared_id"))
    return near_duplicate_pairs([declared[pk] for pk in pks], matrix, settings.CONDOR_SIBLING_THRESHOLD)


def sibling_findings_refresh(system: str) -> int:
    """Replace the system's sibling findings after its vectors changed. Takes the import's per-system lock, so a
    refresh and an import never interleave their writes to the findings."""
    from catalog.services.findings import findings_store, lint_view_from_db

    with transaction.atomic():
        state = CatalogState.objects.select_for_update().filter(system=system).first()
        if state is None or state.current_revision is None:
            return 0
        pks = dict(Tool.objects.filter(system=system).live().values_list("declared_id", "pk"))
        return findings_store(
            view=lint_view_from_db(system), revision=state.current_revision, tool_pks=pks, only=[RULE]
        )
