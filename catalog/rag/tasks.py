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
from catalog.rag.selectors.siblings import systems_awaiting_siblings
from catalog.rag.selectors.vectors import tools_needing_vectors, vectors_pending
from catalog.rag.services.siblings import (
    REFRESH_SIBLINGS_TASK,
    sibling_findings_after_batch,
    sibling_findings_update,
    sibling_refresh_schedule,
)
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
    sibling_findings_after_batch(result.systems, model_id=configured_model_id(), after=max(tool_ids, default=None))
    return len(result.embedded)


@shared_task(name=REFRESH_SIBLINGS_TASK, acks_late=True, reject_on_worker_lost=True)
def refresh_siblings(system: str) -> int:
    """The system's sibling findings after a change, once its vectors are all current (the batch that completes
    it schedules this again otherwise); a duplicate finds nothing unchecked and does nothing."""
    model_id = configured_model_id()
    if vectors_pending(system, model_id=model_id):
        return 0
    return sibling_findings_update(system, model_id=model_id)


@shared_task(name="catalog.rag.tasks.sweep_embeddings", acks_late=True, reject_on_worker_lost=True)
def sweep_embeddings() -> int:
    """Queue every live tool whose vector is missing or stale (a lost message, a killed worker, a new model), and
    the sibling refresh of systems whose vectors are current but not all checked (a refresh lost with its worker)."""
    ids = tools_needing_vectors()
    for chunk in batches(ids):
        embed_tools.delay(chunk)
    if ids:
        log.info("embedding sweep queued %d tool(s)", len(ids))
    # A system still embedding is skipped by the refresh itself (the batch that completes it schedules one again).
    for system in systems_awaiting_siblings():
        sibling_refresh_schedule(system)
    return len(ids)
