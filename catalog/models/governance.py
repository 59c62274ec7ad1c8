"""Findings, waivers and revision reviews: the clinical safety officer's records."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from catalog.domain.rules import UNWAIVABLE_RULES
from catalog.domain.rules.runtime import RUNTIME_RULES
from catalog.domain.vocabulary import SYSTEM_MAX
from catalog.models.catalog import CatalogRevision, Tool


class Severity(models.TextChoices):
    ERROR = "error", gettext_lazy("error")
    WARNING = "warning", gettext_lazy("warning")


class Finding(models.Model):
    """One rule broken by one tool (or by the catalog, for catalog-wide rules), as of a revision.

    Recomputed inside the import transaction, so listing findings is a plain indexed query.
    """

    system = models.CharField(max_length=SYSTEM_MAX)
    tool = models.ForeignKey(Tool, null=True, blank=True, on_delete=models.CASCADE, related_name="findings")
    rule = models.CharField(max_length=60)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    message = models.TextField()
    details = models.JSONField(default=dict, blank=True)
    # The message as a template and its parameters (catalog.domain.messages): pages show it in the reader's
    # language; empty on rows from before, which show `message`.
    text = models.JSONField(default=dict, blank=True)
    revision = models.ForeignKey(CatalogRevision, on_delete=models.CASCADE, related_name="findings")

    class Meta:
        ordering = ["severity", "rule", "tool_id"]
        indexes = [
            models.Index(fields=["system", "severity", "rule"], name="finding_filter_idx"),
            models.Index(fields=["rule"], name="finding_rule_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(severity__in=Severity.values), name="finding_severity_valid"),
            # A runtime finding gathers all its evidence: one per tool and rule (catalog.usage).
            models.UniqueConstraint(
                fields=["tool", "rule"], condition=Q(rule__in=RUNTIME_RULES), name="finding_runtime_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.rule} on {self.tool_id or self.system}"


class WaiverQuerySet(models.QuerySet["Waiver"]):
    def active(self, now: object = None) -> WaiverQuerySet:
        """Waivers that count now: not revoked and not yet expired (an expired one stops by itself)."""
        return self.filter(revoked_at__isnull=True, expires_at__gt=now or timezone.now())


class Waiver(models.Model):
    """A safety officer's time-limited waiver of one rule for one tool, with a written justification."""

    MAX_DAYS = 180

    tool = models.ForeignKey(Tool, on_delete=models.PROTECT, related_name="waivers")
    rule = models.CharField(max_length=60)
    justification = models.TextField()
    expires_at = models.DateTimeField()
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    objects = WaiverQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["tool", "rule", "expires_at"], name="waiver_lookup_idx")]
        constraints = [
            # The seed's two hard rules are never waived, whatever the form or the API says.
            models.CheckConstraint(condition=~Q(rule__in=UNWAIVABLE_RULES), name="waiver_rule_waivable"),
            models.CheckConstraint(condition=~Q(justification=""), name="waiver_justified"),
            models.CheckConstraint(condition=Q(expires_at__gt=models.F("created_at")), name="waiver_expires_later"),
        ]

    def __str__(self) -> str:
        return f"{self.rule} waived for {self.tool_id} until {self.expires_at:%Y-%m-%d}"


class RevisionReview(models.Model):
    """A safety officer's sign-off decision on a revision, with a comment."""

    class Decision(models.TextChoices):
        APPROVE = "approved", gettext_lazy("approved")
        REQUEST_CHANGES = "changes-requested", gettext_lazy("changes requested")

    revision = models.ForeignKey(CatalogRevision, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decision = models.CharField(max_length=20, choices=Decision.choices)
    comment = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.revision} {self.decision} by {self.reviewer_id}"
