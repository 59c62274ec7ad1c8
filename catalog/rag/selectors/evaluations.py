"""Stored retrieval evaluation runs, newest first."""

from __future__ import annotations

from catalog.models import RetrievalEvaluation


def retrieval_evaluations_list(*, limit: int = 20) -> list[RetrievalEvaluation]:
    """The newest runs (one query); the model orders them newest first."""
    return list(RetrievalEvaluation.objects.all()[:limit])
