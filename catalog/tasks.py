"""Celery discovers `<app>.tasks`: the catalog's tasks (the RAG, MCP and telemetry ones live with their code,
catalog/rag/tasks.py, catalog/mcp/tasks.py and catalog/usage/tasks.py, and are imported here to be registered)."""

from __future__ import annotations

from celery import shared_task

from catalog.core.audit import audit_seal
from catalog.mcp.tasks import reimport_server
from catalog.rag.tasks import embed_tools, sweep_embeddings
from catalog.services.import_jobs import run_import_job
from catalog.usage.tasks import compact_usage

__all__ = ["compact_usage", "embed_tools", "reimport_server", "run_import_job", "seal_audit_log", "sweep_embeddings"]


@shared_task(acks_late=True, reject_on_worker_lost=True)
def seal_audit_log() -> int:
    """Seal committed audit events into the hash chain (the beat runs this every couple of seconds)."""
    return audit_seal()
