"""Sibling near-duplicate findings, refreshed after a system's vectors changed."""

from __future__ import annotations

from django.db import transaction

from catalog.models import CatalogState, Tool
from catalog.rag.selectors.vectors import vectors_pending
from catalog.services.findings import findings_store, lint_view_from_db

RULE = "sibling-near-duplicate"


def sibling_findings_after_batch(systems: frozenset[str], *, model_id: str) -> list[str]:
    """Refresh the sibling findings of each of `systems` whose vectors are now all current; returns those.

    Called after each embedding batch commits. The findings compare every pair of a system's vectors, so running
    them after every batch made an import's follow-on work grow with the square of its size (79 refreshes of a
    5,000-tool system, 134 s of 189 s). Only the batch that completes a system refreshes it: each batch checks
    after its own commit, so of two finishing together the later one sees both and refreshes. A batch that fails
    leaves the system incomplete until its retry (or the sweep) completes it, and that one refreshes.
    """
    done = [system for system in sorted(systems) if not vectors_pending(system, model_id=model_id)]
    for system in done:
        sibling_findings_refresh(system)
    return done


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
