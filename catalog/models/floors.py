"""HITL tier floors: the safety officers' table of minimum tiers, kept in the console (not in the manifest).

Written only by catalog/services/floors.py (each change with its audit event); read by catalog/selectors/floors.py.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from catalog.domain.floors import DOMAIN_MAX, PATTERN_MAX, PROPOSALS, TIERS, floor_key
from catalog.domain.vocabulary import SYSTEM_MAX


class TierFloor(models.Model):
    """A minimum HITL tier for the mutating tools of one policy domain, or whose ids match one pattern.

    Empty strings, not NULLs, mark the unused matcher and "both systems", so one plain unique constraint keeps a
    floor from being entered twice.
    """

    policy_domain = models.CharField(max_length=DOMAIN_MAX, blank=True, default="")
    pattern = models.CharField(max_length=PATTERN_MAX, blank=True, default="")
    system = models.CharField(max_length=SYSTEM_MAX, blank=True, default="", help_text="empty for every system")
    min_tier = models.CharField(max_length=10, choices=[(t, t) for t in TIERS])
    reason = models.TextField()
    # NULL for the floors the migration seeded from the Condor seed's reservation.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    # Stamped on every change: with the row count it is the floors' version every process checks.
    updated_at = models.DateTimeField(default=timezone.now)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    # A weakening waits for a second safety officer (TOOLS.md, "What is in effect"): one officer proposes the
    # removal or the lower tier, another confirms it; until then the floor holds as it is. Raising, adding and a
    # new reason take effect at once.
    proposal = models.CharField(max_length=10, blank=True, default="", choices=[(p, p) for p in PROPOSALS])
    proposed_tier = models.CharField(max_length=10, blank=True, default="", help_text="the lower tier proposed")
    proposal_reason = models.TextField(blank=True, default="")
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["policy_domain", "pattern", "system"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(policy_domain="") & ~Q(pattern="")) | (~Q(policy_domain="") & Q(pattern="")),
                name="tier_floor_domain_or_pattern",
            ),
            models.CheckConstraint(condition=Q(min_tier__in=TIERS), name="tier_floor_tier_valid"),
            models.CheckConstraint(condition=~Q(reason=""), name="tier_floor_reasoned"),
            models.UniqueConstraint(fields=["policy_domain", "pattern", "system"], name="tier_floor_unique"),
            # A proposal names who made it, when and why; a lowering names a tier below the floor's.
            models.CheckConstraint(
                condition=(
                    Q(proposal="", proposed_by__isnull=True, proposed_at__isnull=True, proposed_tier="")
                    | (
                        Q(proposal__in=PROPOSALS, proposed_by__isnull=False, proposed_at__isnull=False)
                        & ~Q(proposal_reason="")
                    )
                ),
                name="tier_floor_proposal_complete",
            ),
            models.CheckConstraint(
                condition=Q(proposal="lower", proposed_tier__in=TIERS) | (~Q(proposal="lower") & Q(proposed_tier="")),
                name="tier_floor_lowering_names_a_tier",
            ),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        return floor_key(policy_domain=self.policy_domain, pattern=self.pattern, system=self.system)
