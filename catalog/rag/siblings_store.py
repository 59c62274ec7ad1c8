"""Sibling near-duplicate findings from stored vectors (the `sibling-near-duplicate` rule's input)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from ..domain import rules
from ..models import CatalogState, Finding, Tool
from .siblings import near_duplicate_pairs
from .vectors import current_vectors

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
    from ..services.findings import lint_view_from_db

    with transaction.atomic():
        state = CatalogState.objects.select_for_update().filter(system=system).first()
        if state is None or state.current_revision_id is None:
            return 0
        view = lint_view_from_db(system)
        found = rules.lint(view, only=[RULE])
        pks = dict(Tool.objects.filter(system=system).live().values_list("declared_id", "pk"))
        Finding.objects.filter(system=system, rule=RULE).delete()
        Finding.objects.bulk_create(
            [
                Finding(
                    system=system,
                    tool_id=pks[f.tool_id] if f.tool_id else None,
                    rule=f.rule,
                    severity=f.severity,
                    message=f.message,
                    details=f.details,
                    revision_id=state.current_revision_id,
                )
                for f in found
            ]
        )
    return len(found)
