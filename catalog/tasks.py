"""Celery discovers `<app>.tasks`: the catalog's tasks live with the code they run (catalog/rag/tasks.py)."""

from __future__ import annotations

from .rag.tasks import embed_tools, sweep_embeddings

__all__ = ["embed_tools", "sweep_embeddings"]
