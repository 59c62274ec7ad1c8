"""What keeps telemetry storage flat: minute rollups older than CONDOR_USAGE_MINUTE_HOURS compacted into hour
rollups, and everything past its window dropped (settings, "Runtime telemetry"). Run by the beat; idempotent (a
second run finds nothing to do) and safe beside ingestion (each hour is moved under the lock of its rows)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.domain.rules.runtime import RUNTIME_RULES
from catalog.models import CandidateSet, Finding, MutatingCall, ToolUsage, UnknownToolName
from catalog.services.finding_counts import finding_counts_refresh
from catalog.usage.domain import histogram
from catalog.usage.domain.spans import hour_of
from catalog.usage.services.ingest import FIELDS, add_rollup
from catalog.usage.services.upsert import upsert

HOURS_PER_RUN = 200  # hours compacted per run at most: a backlog is worked off over a few beats, never in one lock


@dataclass
class Compaction:
    hours: int = 0  # hours compacted
    minute_rows: int = 0  # minute rows folded into them
    dropped: int = 0  # rows past their window


def usage_compact(*, now: datetime | None = None) -> Compaction:
    now = now or timezone.now()
    done = Compaction()
    cutoff = hour_of(now - timedelta(hours=settings.CONDOR_USAGE_MINUTE_HOURS))
    minutes = ToolUsage.objects.filter(resolution=ToolUsage.Resolution.MINUTE, bucket__lt=cutoff)
    hours = sorted({hour_of(b) for b in minutes.order_by("bucket").values_list("bucket", flat=True).distinct()[:20000]})
    for hour in hours[:HOURS_PER_RUN]:
        done.minute_rows += _compact_hour(hour)
        done.hours += 1
    done.dropped += _drop_expired(now)
    return done


@transaction.atomic
def _compact_hour(hour: datetime) -> int:
    """Fold one hour's minute rows into its hour rows (created or added to), then delete them."""
    rows = list(
        ToolUsage.objects.select_for_update()
        .filter(resolution=ToolUsage.Resolution.MINUTE, bucket__gte=hour, bucket__lt=hour + timedelta(hours=1))
        .order_by("tool_id", "bucket")
    )
    new: dict[int, ToolUsage] = {}
    for row in rows:
        if row.tool_id not in new:
            new[row.tool_id] = ToolUsage(
                tool_id=row.tool_id,
                resolution=ToolUsage.Resolution.HOUR,
                bucket=hour,
                duration_counts=histogram.empty(),
            )
        add_rollup(new[row.tool_id], row)
    upsert(
        ToolUsage,
        new,
        existing=lambda: ToolUsage.objects.filter(
            resolution=ToolUsage.Resolution.HOUR, bucket=hour, tool_id__in=list(new)
        ),
        key=lambda row: row.tool_id,
        merge=add_rollup,
        fields=FIELDS,
    )
    ToolUsage.objects.filter(pk__in=[r.pk for r in rows]).delete()
    return len(rows)


def _drop_expired(now: datetime) -> int:
    retention = now - timedelta(days=settings.CONDOR_USAGE_RETENTION_DAYS)
    dropped = ToolUsage.objects.filter(bucket__lt=retention).delete()[0]
    dropped += MutatingCall.objects.filter(
        last_seen__lt=now - timedelta(hours=settings.CONDOR_USAGE_CALL_WINDOW_HOURS)
    ).delete()[0]
    dropped += CandidateSet.objects.filter(
        last_served_at__lt=now - timedelta(hours=settings.CONDOR_USAGE_CANDIDATE_SET_HOURS)
    ).delete()[0]
    dropped += UnknownToolName.objects.filter(verdict="", last_seen__lt=retention).delete()[0]
    stale = (now - timedelta(days=settings.CONDOR_USAGE_FINDING_DAYS)).isoformat()
    old = [
        f.pk
        for f in Finding.objects.filter(rule__in=RUNTIME_RULES).only("pk", "details")
        if str((f.details or {}).get("lastSeen", "")) < stale
    ]
    touched = list(Finding.objects.filter(pk__in=old).values_list("tool_id", flat=True))
    dropped += Finding.objects.filter(pk__in=old).delete()[0]
    finding_counts_refresh(touched)
    return dropped
