"""What keeps telemetry storage flat: minute rollups older than CONDOR_USAGE_MINUTE_HOURS compacted into hour
rollups, and everything past its window dropped (settings, "Runtime telemetry"). Run by the beat; idempotent (a
second run finds nothing to do) and safe beside ingestion (each hour is moved under the lock of its rows)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.domain.rules.runtime import RUNTIME_RULES
from catalog.models import CandidateSet, Finding, MutatingCall, ToolUsage, UnknownToolName
from catalog.usage.domain import histogram
from catalog.usage.domain.rollup import merge_error_types
from catalog.usage.domain.spans import hour_of

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
    per_tool: dict[int, list[ToolUsage]] = defaultdict(list)
    for row in rows:
        per_tool[row.tool_id].append(row)
    ToolUsage.objects.bulk_create(
        [
            ToolUsage(tool_id=pk, resolution=ToolUsage.Resolution.HOUR, bucket=hour, duration_counts=histogram.empty())
            for pk in sorted(per_tool)
        ],
        ignore_conflicts=True,
    )
    targets = ToolUsage.objects.select_for_update().filter(
        resolution=ToolUsage.Resolution.HOUR, bucket=hour, tool_id__in=list(per_tool)
    )
    changed = []
    for target in targets.order_by("tool_id"):
        parts = per_tool[target.tool_id]
        target.calls += sum(p.calls for p in parts)
        target.errors += sum(p.errors for p in parts)
        target.retries += sum(p.retries for p in parts)
        target.duration_ms_sum += sum(p.duration_ms_sum for p in parts)
        for p in parts:
            target.error_types = merge_error_types(target.error_types, p.error_types)
        target.duration_counts = histogram.merged([target.duration_counts, *(p.duration_counts for p in parts)])
        changed.append(target)
    fields = ["calls", "errors", "retries", "duration_ms_sum", "error_types", "duration_counts"]
    ToolUsage.objects.bulk_update(changed, fields, batch_size=500)
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
    dropped += Finding.objects.filter(pk__in=old).delete()[0]
    return dropped
