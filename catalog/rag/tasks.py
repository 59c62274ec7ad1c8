"""Embedding tasks. They take ids, re-read the current text, and are safe to run twice.

acks_late + reject_on_worker_lost: a worker killed mid-batch leaves the message to be redelivered; and the
beat sweep re-queues anything still missing or stale, so a lost message heals by itself too.

The names are explicit and equal to the module paths they always had: the beat schedule (condor_admin/settings.py)
and messages already queued name them, and `embeddings_enqueue` starts `embed_tools` by this name.
"""

from __future__ import annotations

import logging

from celery import shared_task

from catalog.rag.embedders import EmbedderError, configured_model_id
from catalog.rag.selectors.vectors import tools_needing_vectors
from catalog.rag.services.siblings import sibling_findings_after_batch
from catalog.rag.services.vectors import EMBED_TOOLS_TASK, batches, embeddings_refresh

log = logging.getLogger(__name__)


@shared_task(
    name=EMBED_TOOLS_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(EmbedderError,),
    retry_backoff=2,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=8,
)
def embed_tools(tool_ids: list[int]) -> int:
    result = embeddings_refresh(tool_ids)
    sibling_findings_after_batch(result.systems, model_id=configured_model_id())
    return len(result.embedded)


@shared_task(name="catalog.rag.tasks.sweep_embeddings", acks_late=True, reject_on_worker_lost=True)
def sweep_embeddings() -> int:
    """Queue every live tool whose vector is missing or stale (a lost message, a killed worker, a new model)."""
    ids = tools_needing_vectors()
    for chunk in batches(ids):
        embed_tools.delay(chunk)
    if ids:
        log.info("embedding sweep queued %d tool(s)", len(ids))
    return len(ids)
