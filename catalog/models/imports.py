"""A manifest import answered at once (issue 24): the API keeps a large manifest here, a worker imports it, and the
importer polls the job's status URL for its phase and result."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import models
from django.utils import timezone

from catalog.models.catalog import CatalogRevision


class ImportJob(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    via = models.CharField(max_length=200, help_text="how the manifest arrived (api token NAME)")
    imported_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    size_bytes = models.PositiveBigIntegerField()
    # The manifest until the import ran (emptied then: the revision keeps its hash, the tools keep their content).
    manifest = models.BinaryField(default=b"")
    revision = models.ForeignKey(CatalogRevision, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # What the synchronous answer would have said: {"unchanged", "summary", "added", "removed", "changed", …}.
    result = models.JSONField(default=dict, blank=True)
    # A refused manifest's problems (the 422 body's `errors`), or the one line an unexpected failure left.
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(state__in=["queued", "running", "done", "failed"]), name="import_job_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"import job {self.pk} ({self.state})"
