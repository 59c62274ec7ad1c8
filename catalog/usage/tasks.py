"""The beat's telemetry upkeep (settings CELERY_BEAT_SCHEDULE "usage-compact")."""

from __future__ import annotations

from celery import shared_task

from catalog.usage.services.retention import usage_compact


@shared_task(acks_late=True, reject_on_worker_lost=True)
def compact_usage() -> dict[str, int]:
    """Compact old minute rollups into hours and drop what is past its window; idempotent."""
    done = usage_compact()
    return {"hours": done.hours, "minute_rows": done.minute_rows, "dropped": done.dropped}
