"""What the runtime did: tool-call telemetry from OpenTelemetry GenAI `execute_tool` spans (catalog/usage).

Storage grows with tools and the retention windows, never with calls: per-tool rollups per minute (compacted
into hours by the beat), a bounded sample of recent executions per tool, the names the runtime called that are
no catalog tool, and, for mutating tools only, how often each tool call id ran inside a window (what finds a
retried write). Written by `catalog.usage.services` only. Bounds and windows: catalog/usage/README.md, "Storage".
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from catalog.domain.vocabulary import SYSTEM_MAX
from catalog.models.catalog import Tool

NAME_MAX = 200  # a tool name, service, agent, error type or tool call id as the span gives it (longer: cut)


class CandidateSet(models.Model):
    """A candidate set the resolve API served (`candidateSetId`): the tools a run was resolved with. Kept for
    CONDOR_USAGE_CANDIDATE_SET_HOURS after it was last served, so an approval request or a span that names it
    can be checked against it."""

    set_id = models.CharField(max_length=40, unique=True)
    system = models.CharField(max_length=SYSTEM_MAX)
    profile = models.CharField(max_length=100)
    tool_keys = models.JSONField(default=list, help_text="canonical keys of the tools served, in order")
    created_at = models.DateTimeField(default=timezone.now)
    last_served_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return self.set_id


class ToolUsage(models.Model):
    """One tool's calls in one minute (resolution m) or, after compaction, one hour (h)."""

    class Resolution(models.TextChoices):
        MINUTE = "m", gettext_lazy("minute")
        HOUR = "h", gettext_lazy("hour")

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="usage")
    resolution = models.CharField(max_length=1, choices=Resolution.choices)
    bucket = models.DateTimeField(help_text="the start of the minute or hour (UTC)")
    calls = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    error_types = models.JSONField(default=dict, blank=True, help_text="{error.type: count}, bounded")
    retries = models.PositiveIntegerField(default=0, help_text="executions with condor.retry.attempt above 1")
    duration_ms_sum = models.FloatField(default=0.0)
    duration_counts = models.JSONField(default=list, help_text="counts per duration bucket (usage.domain.histogram)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tool", "resolution", "bucket"], name="tool_usage_unique_bucket"),
            models.CheckConstraint(condition=Q(resolution__in=["m", "h"]), name="tool_usage_resolution_valid"),
            models.CheckConstraint(condition=Q(errors__lte=models.F("calls")), name="tool_usage_errors_le_calls"),
        ]
        indexes = [models.Index(fields=["resolution", "bucket"], name="tool_usage_compact_idx")]

    def __str__(self) -> str:
        return f"{self.tool_id}@{self.bucket:%Y-%m-%d %H:%M}/{self.resolution}"


class ToolExecution(models.Model):
    """One recent execution of a tool: the newest CONDOR_USAGE_SAMPLES_PER_TOOL per tool are kept."""

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="executions")
    executed_at = models.DateTimeField()
    duration_ms = models.FloatField()
    error_type = models.CharField(max_length=NAME_MAX, blank=True)
    tool_call_id = models.CharField(max_length=NAME_MAX, blank=True)
    called_name = models.CharField(max_length=NAME_MAX, help_text="the spelling the runtime called")
    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    service = models.CharField(max_length=NAME_MAX, blank=True)
    agent = models.CharField(max_length=NAME_MAX, blank=True)
    profile = models.CharField(max_length=100, blank=True)
    attempt = models.PositiveIntegerField(null=True, blank=True)
    candidate_set_id = models.CharField(max_length=40, blank=True)
    approval_id = models.CharField(max_length=64, blank=True)
    stamped = models.JSONField(default=dict, blank=True, help_text="the condor.* policy attributes the runtime stamped")

    class Meta:
        indexes = [models.Index(fields=["tool", "-executed_at"], name="tool_execution_recent_idx")]

    def __str__(self) -> str:
        return f"{self.called_name} at {self.executed_at:%Y-%m-%d %H:%M:%S}"


class MutatingCall(models.Model):
    """How often one mutating tool ran for one tool call id (kept CONDOR_USAGE_CALL_WINDOW_HOURS): more than once
    is a retried write."""

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="+")
    tool_call_id = models.CharField(max_length=NAME_MAX)
    executions = models.PositiveIntegerField(default=0)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)
    trace_ids = models.JSONField(default=list, blank=True, help_text="the traces it ran in (the first few)")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tool", "tool_call_id"], name="mutating_call_unique")]

    def __str__(self) -> str:
        return f"{self.tool_id}:{self.tool_call_id} ×{self.executions}"


class UnknownToolName(models.Model):
    """A name the runtime called (or a UI action the frontend dropped) that is no live catalog tool under any
    spelling. An owner may say what it should be: an alias of a real tool (advice for the source manifest; the
    catalog itself changes only by import) or noise to ignore."""

    class Source(models.TextChoices):
        CALL = "call", gettext_lazy("tool call")
        UI = "ui", gettext_lazy("dropped UI action")

    class Verdict(models.TextChoices):
        OPEN = "", gettext_lazy("undecided")
        ALIAS = "alias", gettext_lazy("should be an alias")
        IGNORE = "ignore", gettext_lazy("ignored")

    name = models.CharField(max_length=NAME_MAX)
    source = models.CharField(max_length=4, choices=Source.choices, default=Source.CALL)
    key = models.CharField(max_length=NAME_MAX, help_text="its canonical key")
    calls = models.PositiveIntegerField(default=0)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    services = models.JSONField(default=list, blank=True, help_text="the services that called it (the first few)")
    agents = models.JSONField(default=list, blank=True, help_text="the agents that called it (the first few)")
    verdict = models.CharField(max_length=6, choices=Verdict.choices, default=Verdict.OPEN, blank=True)
    alias_of = models.ForeignKey(Tool, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    verdict_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    verdict_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "source"], name="unknown_name_unique"),
            models.CheckConstraint(condition=Q(source__in=["call", "ui"]), name="unknown_name_source_valid"),
            models.CheckConstraint(condition=Q(verdict__in=["", "alias", "ignore"]), name="unknown_name_verdict_valid"),
            # "should be an alias" names the tool; the other verdicts name none.
            models.CheckConstraint(
                condition=Q(verdict="alias", alias_of__isnull=False) | (~Q(verdict="alias") & Q(alias_of__isnull=True)),
                name="unknown_name_alias_names_tool",
            ),
        ]
        indexes = [models.Index(fields=["verdict", "-last_seen"], name="unknown_name_board_idx")]

    def __str__(self) -> str:
        return self.name


class TelemetrySource(models.Model):
    """One runtime service (`service.name`) that sent spans: when it was first and last heard, and how much of
    what it sent was kept. Tells "no calls" from "no telemetry"."""

    service = models.CharField(max_length=NAME_MAX, unique=True)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    spans = models.PositiveBigIntegerField(default=0, help_text="execute_tool spans accepted")
    rejected = models.PositiveBigIntegerField(default=0, help_text="spans refused (partial success)")

    def __str__(self) -> str:
        return self.service
