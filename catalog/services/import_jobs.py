"""Imports answered at once: above `CONDOR_ASYNC_IMPORT_BYTES` the API stores the manifest as an `ImportJob`, a
worker imports it (`run_import_job`, started after commit) and the importer polls the job's status URL.

The import itself is the same `catalog_import`, one transaction; the job row is written outside it (so its state
is visible while the import runs) and the phase the import reached goes to the cache, which every process shares
once `REDIS_URL` is set.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from catalog.domain.manifest import ManifestError
from catalog.models import ImportJob
from catalog.services.imports import ImportResult, catalog_import

log = logging.getLogger("condor.import")

RUN_IMPORT_JOB_TASK = "catalog.tasks.run_import_job"
PHASE_TTL_SECONDS = 24 * 3600


def _phase_key(job_id: int) -> str:
    return f"import-job:{job_id}:phase"


def import_job_phase(job: ImportJob) -> str:
    """What the job is doing now: the import's last step while it runs (when the cache is shared), else its state."""
    if job.state == ImportJob.State.RUNNING:
        return str(cache.get(_phase_key(job.pk)) or "importing")
    return {"queued": "waiting for a worker", "done": "done", "failed": "refused"}[job.state]


def import_job_create(*, raw: bytes, via: str, imported_by: User | None) -> ImportJob:
    """Keep the manifest as a job and start its import after commit."""
    with transaction.atomic():
        job = ImportJob.objects.create(via=via, imported_by=imported_by, size_bytes=len(raw), manifest=raw)
        job_id = job.pk
        transaction.on_commit(lambda: run_import_job.delay(job_id))
    return job


def result_body(result: ImportResult) -> dict[str, object]:
    """The import's answer as the API gives it (the revision apart): the same for a direct and a job import."""
    return {
        "unchanged": result.unchanged,
        "summary": result.summary(),
        "added": result.added,
        "removed": result.removed,
        "changed": result.changed,
        "safety_relevant": result.safety_relevant,
    }


def import_job_run(job_id: int) -> ImportJob | None:
    """Import the job's manifest (once: a redelivered message finds it running or finished and does nothing)."""
    claimed = ImportJob.objects.filter(pk=job_id, state=ImportJob.State.QUEUED).update(state=ImportJob.State.RUNNING)
    if not claimed:
        return None
    job = ImportJob.objects.get(pk=job_id)
    key = _phase_key(job_id)
    try:
        result = catalog_import(
            raw=bytes(job.manifest),
            via=job.via,
            imported_by=job.imported_by,
            on_step=lambda what: cache.set(key, what, PHASE_TTL_SECONDS),
        )
    except ManifestError as exc:
        job.state, job.errors = ImportJob.State.FAILED, exc.listed()  # bounded: the first problems, then a count
    except Exception as exc:  # the job must not stay "running" for ever; the worker log has the traceback
        log.exception("import job %s failed", job_id)
        job.state, job.errors = ImportJob.State.FAILED, [f"the import failed unexpectedly: {type(exc).__name__}"]
    else:
        job.state, job.result, job.revision = ImportJob.State.DONE, result_body(result), result.revision
    job.manifest = b""
    job.finished_at = timezone.now()
    job.save(update_fields=["state", "errors", "result", "revision", "manifest", "finished_at"])
    cache.delete(key)
    return job


@shared_task(name=RUN_IMPORT_JOB_TASK, acks_late=True, reject_on_worker_lost=True)
def run_import_job(job_id: int) -> str:
    job = import_job_run(job_id)
    return job.state if job else "already taken"
