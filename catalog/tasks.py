"""Celery discovers `<app>.tasks`: the catalog's tasks (the RAG ones live with their code, catalog/rag/tasks.py)."""

from __future__ import annotations

from celery import shared_task

from catalog.core.audit import audit_seal
from catalog.rag.tasks import embed_tools, sweep_embeddings

__all__ = ["embed_tools", "seal_audit_log", "sweep_embeddings"]


@shared_task(acks_late=True, reject_on_worker_lost=True)
def seal_audit_log() -> int:
    """Seal committed audit events into the hash chain (the beat runs this every couple of seconds)."""
    return audit_seal()
