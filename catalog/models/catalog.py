"""Catalog models: what the source repositories declare, mirrored field by field, and what we derive.

Declared fields are written only by the import service; derived fields only by the derivations in
`catalog/domain/` (called from the import service). Neither is edited by hand in the admin.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Cast, Concat, Upper
from django.utils import timezone
from django.utils.functional import Promise

from catalog.domain.descriptor import DECLARED_FIELDS, Descriptor
from catalog.domain.vocabulary import (
    SYSTEM_MAX,
    Availability,
    ChangeKind,
    FloorTrigger,
    HitlTier,
    Idempotency,
    Plane,
    PolicyClass,
    RetryClass,
    ReviewState,
    System,
)
from catalog.models.labels import STATE_LABELS


def _choices(enum: type[StrEnum]) -> list[tuple[str, str | Promise]]:
    """Each value and how a page names it: a state word's translated label, else the value (the glossary's term)."""
    return [(member.value, STATE_LABELS.get(member.value, member.value)) for member in enum]


def _in(field: str, enum: type[StrEnum]) -> Q:
    return Q(**{f"{field}__in": [member.value for member in enum]})


class Team(models.Model):
    """An owning team; shared by both systems, created or updated by imports, never deleted by one."""

    slug = models.CharField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    oncall = models.CharField("on-call handle", max_length=200, blank=True)
    channel = models.CharField(max_length=200, blank=True)
    escalation = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class OwnershipRule(models.Model):
    """(plane, module or "*") → team, per system. The owner of a tool is derived from these."""

    system = models.CharField(max_length=SYSTEM_MAX)
    plane = models.CharField(max_length=20, choices=_choices(Plane))
    module = models.CharField(max_length=100, help_text='a module, or "*" for any module of the plane')
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="ownership_rules")

    class Meta:
        ordering = ["system", "plane", "module"]
        constraints = [
            models.UniqueConstraint(fields=["system", "plane", "module"], name="ownership_rule_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.system}: {self.plane}/{self.module} → {self.team.slug}"


class CatalogProfile(models.Model):
    """A catalog profile: which availabilities are active, whether it is clinical, explicit includes."""

    system = models.CharField(max_length=SYSTEM_MAX, help_text="the manifest that declared it")
    slug = models.CharField(max_length=100, unique=True)
    clinical = models.BooleanField(default=False)
    availabilities = models.JSONField(default=list)
    includes = models.JSONField(default=list, help_text="declared tool ids included explicitly")

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class ForcedFloor(models.Model):
    """Ids forced into the candidate set on a trigger; floors lead the ordered set."""

    system = models.CharField(max_length=SYSTEM_MAX)
    slug = models.CharField(max_length=100)
    trigger = models.CharField(max_length=30, choices=_choices(FloorTrigger))
    tool_ids = models.JSONField(default=list, help_text="ordered declared tool ids")

    class Meta:
        ordering = ["system", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["system", "slug"], name="forced_floor_unique"),
            models.CheckConstraint(condition=_in("trigger", FloorTrigger), name="forced_floor_trigger_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.slug} ({self.trigger})"


class Agent(models.Model):
    """A TUCAN agent and the categories bound to it at construction."""

    system = models.CharField(max_length=SYSTEM_MAX, default=System.TUCAN.value)
    slug = models.CharField(max_length=100)
    categories = models.JSONField(default=list)

    class Meta:
        ordering = ["system", "slug"]
        constraints = [models.UniqueConstraint(fields=["system", "slug"], name="agent_unique")]

    def __str__(self) -> str:
        return self.slug


class CatalogRevision(models.Model):
    """One accepted import of one system's manifest."""

    system = models.CharField(max_length=SYSTEM_MAX)
    number = models.PositiveIntegerField()
    format = models.CharField(max_length=40)
    manifest_sha256 = models.CharField(max_length=64)
    source_repository = models.CharField(max_length=200, blank=True)
    source_commit = models.CharField(max_length=100, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_via = models.CharField(max_length=200, help_text="cli, api token name, demo loader …")
    created_at = models.DateTimeField(default=timezone.now)
    baseline_count = models.PositiveIntegerField(null=True, blank=True, help_text="the manifest's audited baseline")
    tool_count = models.PositiveIntegerField(help_text="live tools after this import")
    business_tool_count = models.PositiveIntegerField(
        default=0, help_text="live business-plane tools after this import"
    )
    added_count = models.PositiveIntegerField(default=0)
    removed_count = models.PositiveIntegerField(default=0)
    changed_count = models.PositiveIntegerField(default=0)
    safety_change_count = models.PositiveIntegerField(default=0)
    config_changes = models.JSONField(
        default=dict, blank=True, help_text="teams/ownership/profiles/forcedFloors/agents/baselineCount: old and new"
    )
    review_state = models.CharField(
        max_length=20, choices=_choices(ReviewState), default=ReviewState.PENDING.value, db_index=True
    )
    auto_approved = models.BooleanField(
        default=False, help_text="no change that waits for sign-off (none, or only strengthening): approved by itself"
    )
    weakening_count = models.PositiveIntegerField(
        default=0, help_text="tools this revision left awaiting sign-off (a weakening change)"
    )
    signoffs_required = models.PositiveSmallIntegerField(
        default=1, help_text="2 when a weakening change touches a tier-high tool"
    )
    findings_added = models.JSONField(default=list, blank=True, help_text="[rule, declared id] this import added")
    findings_cleared = models.JSONField(default=list, blank=True, help_text="[rule, declared id] this import cleared")
    lint_fingerprint = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="the rules' code that made the stored findings (catalog.domain.rules.scope): an import keeps an "
        "unchanged tool's findings only under the same code",
    )
    superseded_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the newer revision whose sign-off put this one's changes in effect",
    )

    class Meta:
        ordering = ["system", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["system", "number"], name="revision_number_unique"),
            models.CheckConstraint(condition=_in("review_state", ReviewState), name="revision_review_state_valid"),
        ]
        indexes = [models.Index(fields=["system", "manifest_sha256"], name="revision_sha_idx")]

    def __str__(self) -> str:
        return f"{self.system} r{self.number}"


class CatalogState(models.Model):
    """One row per system: imports lock it (SELECT … FOR UPDATE) so two imports never interleave."""

    system = models.CharField(max_length=SYSTEM_MAX, unique=True)
    current_revision = models.ForeignKey(
        CatalogRevision, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    signed_off_at = models.DateTimeField(
        null=True, blank=True, help_text="the last sign-off that changed what is in effect (in the catalog version)"
    )
    # The configuration a safety officer last signed off (catalog.selectors.served): {"profiles": {slug:
    # {"availabilities": [...], "includes": [...]}}, "forcedFloors": {slug: {"trigger": ..., "tools": [...]}}}.
    # Until the next sign-off a clinical profile is served the narrower of it and the newest import's profile, and
    # every profile the union of its forced floors and the newest import's (fail closed).
    signed_sections = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return self.system


LIVE = Q(retired_in__isnull=True)

# The catalog browser's sort keys with an index of their own (each followed by declared_id, system): "system" has the
# unique constraint's index, "owner" sorts by a column of another table (the team's slug).
SORTED_BY: dict[str, tuple[str, ...]] = {
    "id": (),
    "plane": ("plane",),
    "module": ("module",),
    "availability": ("availability",),
    "policy": ("effective_policy_class",),
    "mutating": ("is_mutating",),
    "hitl": ("hitl_tier",),
    "retry": ("effective_retry_class",),
    "findings": ("findings_count",),
}


class ToolQuerySet(models.QuerySet["Tool"]):
    def live(self) -> ToolQuerySet:
        return self.filter(retired_in__isnull=True)


class Tool(models.Model):
    """A declared tool: every descriptor axis is its own queryable field."""

    system = models.CharField(max_length=SYSTEM_MAX)
    declared_id = models.CharField(max_length=200)
    # --- declared (written only by the import service) ---
    plane = models.CharField(max_length=20, choices=_choices(Plane))
    module = models.CharField(max_length=100)
    category = models.CharField(max_length=100, blank=True, help_text="TUCAN category")
    availability = models.CharField(max_length=20, choices=_choices(Availability))
    policy_class = models.CharField(max_length=10, choices=_choices(PolicyClass), null=True, blank=True)
    policy_domain = models.CharField(max_length=100, null=True, blank=True)
    mutating = models.BooleanField()
    retry_class = models.CharField(max_length=20, choices=_choices(RetryClass))
    idempotency = models.CharField(max_length=20, choices=_choices(Idempotency))
    hitl_tier = models.CharField("HITL tier", max_length=10, choices=_choices(HitlTier), null=True, blank=True)
    description = models.TextField(blank=True, help_text="TUCAN tool description")
    rag_description = models.TextField(blank=True)
    rag_keywords = models.JSONField(default=dict, blank=True, help_text='{"en": [...], "de": [...]}')
    instruction_fragment = models.TextField(null=True, blank=True)
    styling_fragment = models.TextField(null=True, blank=True)
    output_instructions = models.TextField(null=True, blank=True)
    output_contains_ids = models.BooleanField(default=False)
    always_include = models.BooleanField(default=False)
    metadata_ref = models.CharField(max_length=300, null=True, blank=True)
    source_path = models.CharField(max_length=300, null=True, blank=True)
    aliases = models.JSONField(default=list, blank=True)
    input_schema = models.JSONField(null=True, blank=True)
    mcp = models.JSONField(
        null=True,
        blank=True,
        help_text="MCP tools: server, name, title, outputSchema, annotations as declared (catalog.domain.mcp)",
    )
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the declared fields")
    rag_text_sha256 = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the text the tool is embedded by (ragDescription + keywords)"
    )
    # --- derived (written only from catalog.domain derivations) ---
    canonical_key = models.CharField(max_length=200, db_index=True)
    llm_name = models.CharField("LLM name", max_length=200, db_index=True)
    is_mutating = models.BooleanField(help_text="the mutating predicate")
    effective_policy_class = models.CharField(max_length=10, choices=_choices(PolicyClass))
    effective_retry_class = models.CharField(max_length=20, choices=_choices(RetryClass))
    owner = models.ForeignKey(Team, null=True, blank=True, on_delete=models.PROTECT, related_name="tools")
    owner_rule = models.ForeignKey(
        OwnershipRule, null=True, blank=True, on_delete=models.SET_NULL, related_name="tools"
    )
    # --- lifecycle ---
    first_revision = models.ForeignKey(CatalogRevision, on_delete=models.PROTECT, related_name="+")
    last_changed_revision = models.ForeignKey(CatalogRevision, on_delete=models.PROTECT, related_name="+")
    safety_revision = models.ForeignKey(
        CatalogRevision,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the revision of the last safety-relevant change to this declaration (what sign-off covers)",
    )
    retired_in = models.ForeignKey(
        CatalogRevision,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the revision whose manifest no longer declared this tool",
    )
    # --- in effect for clinical profiles (catalog.domain.effect; written by imports and sign-offs only) ---
    in_effect = models.JSONField(
        null=True,
        blank=True,
        help_text="the declared fields clinical profiles are served; null: never signed off (absent there)",
    )
    in_effect_revision = models.ForeignKey(
        CatalogRevision,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the revision whose sign-off (or strengthening import) last changed what is in effect",
    )
    in_effect_text_sha256 = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the embedded text in effect (its vector is kept)"
    )
    awaiting_signoff = models.BooleanField(
        default=False, db_index=True, help_text="the newest declaration differs from what is in effect"
    )
    # --- kept counts (catalog.services.finding_counts; written by every service that writes findings) ---
    findings_count = models.PositiveIntegerField(default=0, help_text="the tool's findings, kept current")
    error_count = models.PositiveIntegerField(default=0, help_text="the tool's error findings, kept current")
    # --- what the catalog browser's search reads (catalog.selectors.catalog): kept by the database itself ---
    search_text = models.GeneratedField(
        expression=Concat(
            "declared_id",
            Value("\n"),
            "canonical_key",
            Value("\n"),
            "description",
            Value("\n"),
            "rag_description",
            Value("\n"),
            Cast("rag_keywords", models.TextField()),
            output_field=models.TextField(),
        ),
        output_field=models.TextField(),
        db_persist=True,
        help_text="the searched texts in one column (a trigram index on PostgreSQL)",
    )

    objects = ToolQuerySet.as_manager()

    class Meta:
        ordering = ["system", "declared_id"]
        constraints = [
            models.UniqueConstraint(fields=["system", "declared_id"], name="tool_declared_id_unique"),
            # The seed's compile-time rule, now a database rule: a mutate descriptor declares its tier.
            # (isnull spelled out: `NULL IN (...)` is unknown, and an unknown CHECK passes.)
            models.CheckConstraint(
                condition=~Q(policy_class=PolicyClass.MUTATE.value)
                | (Q(hitl_tier__isnull=False) & Q(hitl_tier__in=[t.value for t in HitlTier])),
                name="tool_mutate_requires_hitl_tier",
            ),
            # Mutating tools are never retried, whatever they declare.
            models.CheckConstraint(
                condition=Q(is_mutating=False) | Q(effective_retry_class=RetryClass.NONE.value),
                name="tool_mutating_never_retried",
            ),
            models.CheckConstraint(
                condition=Q(is_mutating=False) | Q(effective_policy_class=PolicyClass.MUTATE.value),
                name="tool_mutating_is_mutate_class",
            ),
            models.CheckConstraint(condition=_in("plane", Plane), name="tool_plane_valid"),
            models.CheckConstraint(condition=_in("availability", Availability), name="tool_availability_valid"),
            models.CheckConstraint(condition=_in("retry_class", RetryClass), name="tool_retry_class_valid"),
            models.CheckConstraint(condition=_in("idempotency", Idempotency), name="tool_idempotency_valid"),
        ]
        indexes = [
            models.Index(fields=["system", "plane", "module"], name="tool_plane_module_idx"),
            models.Index(fields=["retired_in"], name="tool_retired_idx"),
            # The catalog browser's sorts (catalog.selectors.catalog.SORTS), live tools only: a page, however deep,
            # reads the index in order instead of sorting the catalog. (system, declared_id) is the unique
            # constraint's index; the trailing system makes every key unique, so pages never overlap; the id after
            # it lets a page's ids come from the index alone (an index-only scan, CatalogRows; migration 0022).
            *(
                models.Index(
                    fields=[*columns, "declared_id", "system", "id"], name=f"tool_live_{name}_idx", condition=LIVE
                )
                for name, columns in SORTED_BY.items()
            ),
            # A team's tools in the catalog's order (the team page, the catalog filtered by owner).
            models.Index(fields=["owner", "declared_id", "system", "id"], name="tool_live_owner_idx", condition=LIVE),
            # Search: a trigram index over the upper-cased texts, the form Django's icontains compares (PostgreSQL
            # only: migration 0019 creates it there; SQLite scans).
            GinIndex(OpClass(Upper("search_text"), name="gin_trgm_ops"), name="tool_live_search_trgm", condition=LIVE),
        ]

    def __str__(self) -> str:
        return f"{self.system}:{self.declared_id}"

    @property
    def is_live(self) -> bool:
        return self.retired_in_id is None

    def declared(self) -> dict[str, Any]:
        """The declared fields as plain values, as `Descriptor.declared()` gives them (what diffs, the in-effect
        projection and sign-off compare)."""
        return {name: getattr(self, name) for name in DECLARED_FIELDS}

    def descriptor(self) -> Descriptor:
        """The stored declaration as the pure rules and projections take it."""
        return Descriptor(declared_id=self.declared_id, **self.declared())


class ToolChange(models.Model):
    """One tool's change in one revision: added, removed or changed, with old and new of every field."""

    revision = models.ForeignKey(CatalogRevision, on_delete=models.CASCADE, related_name="changes")
    tool = models.ForeignKey(Tool, on_delete=models.PROTECT, related_name="changes")
    declared_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=_choices(ChangeKind))
    fields = models.JSONField(default=dict, help_text="{field: [old, new]}")
    safety_fields = models.JSONField(default=list, help_text="the safety-relevant axes that changed")
    safety_relevant = models.BooleanField(default=False, db_index=True)
    classes = models.JSONField(
        default=dict, blank=True, help_text="{field: strengthening | weakening} (catalog.domain.effect.change_classes)"
    )
    weakening = models.BooleanField(default=False, help_text="any weakening change: it waits for sign-off")

    class Meta:
        ordering = ["revision", "declared_id"]
        constraints = [
            models.UniqueConstraint(fields=["revision", "tool"], name="tool_change_unique"),
            models.CheckConstraint(condition=_in("kind", ChangeKind), name="tool_change_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.revision}: {self.kind} {self.declared_id}"

    def safety_values(self) -> list[tuple[str, object]]:
        """The safety axes of an added (new values) or removed (old values) tool, for a compact summary."""
        index = 0 if self.kind == ChangeKind.REMOVED else 1
        return [(name, self.fields[name][index]) for name in self.safety_fields if name in self.fields]


def _hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ApiToken(models.Model):
    """A service's bearer token; only its SHA-256 is stored (the token is shown once)."""

    # catalog:read lists, exports and reads policy; catalog:write imports a manifest, which replaces the catalog
    # (migration 0013 split the old `catalog` scope by what each token had used).
    SCOPES = ("catalog:read", "catalog:write", "approvals", "rag", "cards", "telemetry")

    name = models.CharField(max_length=100, unique=True)
    prefix = models.CharField(max_length=12, help_text="first characters, to recognise a token")
    token_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="the person answerable for what this token does (recorded as the importer of its imports)",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def generate() -> str:
        return "cnd_" + secrets.token_urlsafe(32)

    @staticmethod
    def hash(raw: str) -> str:
        return _hash_token(raw)

    def is_usable(self, now: datetime | None = None) -> bool:
        """Not revoked, not expired, and its owner (if it has one) still an active user: a deactivated person's
        tokens stop with their account (a leaver's import token would otherwise still replace catalogs in their
        name)."""
        now = now or timezone.now()
        if self.revoked_at is not None:
            return False
        if self.owner is not None and not self.owner.is_active:
            return False
        return self.expires_at is None or self.expires_at > now
