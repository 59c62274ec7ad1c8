"""Sibling near-duplicates of one system from its stored vectors (the `sibling-near-duplicate` rule's input)."""

from __future__ import annotations

from django.conf import settings

from catalog.models import Tool
from catalog.rag.domain.siblings import near_duplicate_pairs
from catalog.rag.selectors.vectors import current_vectors


def sibling_pairs_for(system: str) -> list[tuple[str, str, float]]:
    """(declared id a, declared id b, cosine) of the system's live tools whose current vectors collide."""
    pks, matrix = current_vectors(system)
    if len(pks) < 2:
        return []
    declared = dict(Tool.objects.filter(pk__in=pks).values_list("pk", "declared_id"))
    return near_duplicate_pairs([declared[pk] for pk in pks], matrix, settings.CONDOR_SIBLING_THRESHOLD)
