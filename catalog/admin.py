"""Django admin for raw maintenance. Declared and derived fields are read-only: the manifest is their
source and the derivations compute the rest; only API tokens can be revoked here (audited, via the service)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from catalog.core.admin import ReadOnlyAdmin
from catalog.core.tokens import TokenRefused, api_token_revoke
from catalog.models import (
    Agent,
    ApiToken,
    AuditChainHead,
    AuditEvent,
    CandidateSet,
    CardFinding,
    CardLocale,
    CardsState,
    CardString,
    CardTranslation,
    CatalogProfile,
    CatalogRevision,
    CatalogState,
    Finding,
    ForcedFloor,
    ImportJob,
    McpServer,
    MutatingCall,
    OwnershipRule,
    RetrievalEvaluation,
    RevisionReview,
    Team,
    TelemetrySource,
    TierFloor,
    Tool,
    ToolChange,
    ToolEmbedding,
    ToolExecution,
    ToolUsage,
    UnknownToolName,
    UserPreference,
    Waiver,
)


@admin.register(Tool)
class ToolAdmin(ReadOnlyAdmin):
    list_display = (
        "declared_id",
        "system",
        "plane",
        "module",
        "owner",
        "availability",
        "effective_policy_class",
        "is_mutating",
        "hitl_tier",
        "effective_retry_class",
        "retired_in",
    )
    list_filter = ("system", "plane", "availability", "effective_policy_class", "is_mutating", "hitl_tier", "owner")
    search_fields = ("declared_id", "canonical_key", "llm_name", "rag_description")
    list_select_related = ("owner", "retired_in")


@admin.register(Team)
class TeamAdmin(ReadOnlyAdmin):
    list_display = ("slug", "name", "oncall", "channel")
    search_fields = ("slug", "name")


@admin.register(OwnershipRule)
class OwnershipRuleAdmin(ReadOnlyAdmin):
    list_display = ("system", "plane", "module", "team")
    list_filter = ("system", "plane")
    list_select_related = ("team",)


@admin.register(CatalogProfile)
class CatalogProfileAdmin(ReadOnlyAdmin):
    list_display = ("slug", "system", "clinical", "availabilities", "includes")


@admin.register(ForcedFloor)
class ForcedFloorAdmin(ReadOnlyAdmin):
    list_display = ("slug", "system", "trigger", "tool_ids")


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    list_display = ("slug", "system", "categories")


class ToolChangeInline(admin.TabularInline):
    model = ToolChange
    fields = ("declared_id", "kind", "safety_relevant", "safety_fields", "fields")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(CatalogRevision)
class CatalogRevisionAdmin(ReadOnlyAdmin):
    list_display = (
        "__str__",
        "created_at",
        "imported_via",
        "tool_count",
        "baseline_count",
        "added_count",
        "removed_count",
        "changed_count",
        "safety_change_count",
    )
    list_filter = ("system",)
    inlines = [ToolChangeInline]


@admin.register(ToolChange)
class ToolChangeAdmin(ReadOnlyAdmin):
    list_display = ("revision", "declared_id", "kind", "safety_relevant")
    list_filter = ("kind", "safety_relevant", "revision__system")
    search_fields = ("declared_id",)
    list_select_related = ("revision",)


@admin.register(CatalogState)
class CatalogStateAdmin(ReadOnlyAdmin):
    list_display = ("system", "current_revision")


@admin.register(ImportJob)
class ImportJobAdmin(ReadOnlyAdmin):
    # The manifest bytes (up to CONDOR_MAX_MANIFEST_BYTES) are never loaded for the list.
    list_display = ("pk", "state", "via", "size_bytes", "created_at", "finished_at", "revision")
    list_filter = ("state",)
    list_select_related = ("revision",)
    exclude = ("manifest",)

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).defer("manifest")


@admin.register(McpServer)
class McpServerAdmin(ReadOnlyAdmin):
    list_display = ("system", "name", "version", "transport", "last_imported_at")
    search_fields = ("slug", "name")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "scopes", "created_at", "expires_at", "revoked_at", "last_used_at")
    readonly_fields = (
        "name",
        "prefix",
        "token_hash",
        "scopes",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    )
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tokens are issued on the console's API tokens page (or manage.py create_api_token)

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: Any) -> None:
        # Through the service, so each revocation is audited like one made on the console's page.
        for pk in queryset.filter(revoked_at__isnull=True).values_list("pk", flat=True):
            try:
                api_token_revoke(token_id=pk, revoked_by=request.user)
            except TokenRefused as exc:
                self.message_user(request, exc.message, level=messages.ERROR)
                return


@admin.register(Finding)
class FindingAdmin(ReadOnlyAdmin):
    list_display = ("rule", "severity", "system", "tool", "revision")
    list_filter = ("severity", "rule", "system")
    search_fields = ("tool__declared_id", "message")
    list_select_related = ("tool", "revision")


@admin.register(Waiver)
class WaiverAdmin(ReadOnlyAdmin):
    """Waivers are granted and revoked on the console (services write their audit events)."""

    list_display = ("tool", "rule", "granted_by", "expires_at", "revoked_at")
    list_filter = ("rule",)
    list_select_related = ("tool", "granted_by")


@admin.register(TierFloor)
class TierFloorAdmin(ReadOnlyAdmin):
    """Tier floors are kept on the console's floors page (validated, audited, findings re-linted), not here."""

    list_display = ("__str__", "min_tier", "reason", "created_by", "updated_at")
    list_filter = ("min_tier", "system")
    list_select_related = ("created_by",)


# Telemetry (catalog/usage): written by the ingest service and the beat only; read here for raw maintenance.
@admin.register(ToolUsage)
class ToolUsageAdmin(ReadOnlyAdmin):
    list_display = ("tool", "resolution", "bucket", "calls", "errors", "retries")
    list_filter = ("resolution",)
    list_select_related = ("tool",)


@admin.register(ToolExecution)
class ToolExecutionAdmin(ReadOnlyAdmin):
    list_display = ("called_name", "tool", "executed_at", "duration_ms", "error_type", "tool_call_id", "service")
    search_fields = ("called_name", "tool_call_id", "trace_id")
    list_select_related = ("tool",)


@admin.register(MutatingCall)
class MutatingCallAdmin(ReadOnlyAdmin):
    list_display = ("tool", "tool_call_id", "executions", "first_seen", "last_seen")
    list_select_related = ("tool",)


@admin.register(UnknownToolName)
class UnknownToolNameAdmin(ReadOnlyAdmin):
    """Verdicts are given on the console's unknown-names board (audited), not here."""

    list_display = ("name", "source", "calls", "last_seen", "verdict", "alias_of")
    list_filter = ("source", "verdict")
    search_fields = ("name",)


@admin.register(TelemetrySource)
class TelemetrySourceAdmin(ReadOnlyAdmin):
    list_display = ("service", "first_seen", "last_seen", "spans", "rejected")


@admin.register(CandidateSet)
class CandidateSetAdmin(ReadOnlyAdmin):
    list_display = ("set_id", "system", "profile", "last_served_at")


@admin.register(RevisionReview)
class RevisionReviewAdmin(ReadOnlyAdmin):
    list_display = ("revision", "decision", "reviewer", "created_at")
    list_select_related = ("revision", "reviewer")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("pk", "seq", "created_at", "actor", "action", "object_type", "object_id")
    list_filter = ("action",)
    search_fields = ("object_id", "actor")


@admin.register(CardLocale)
class CardLocaleAdmin(ReadOnlyAdmin):
    list_display = ("code", "fallback", "required")


@admin.register(CardString)
class CardStringAdmin(ReadOnlyAdmin):
    """Card strings are edited in the translator's workspace (checks, audit events), not here."""

    list_display = ("key", "module", "source")
    list_filter = ("module",)
    search_fields = ("key", "source")


@admin.register(CardTranslation)
class CardTranslationAdmin(ReadOnlyAdmin):
    list_display = ("string", "locale", "state")
    list_filter = ("state", "locale")
    list_select_related = ("string", "locale")


@admin.register(CardFinding)
class CardFindingAdmin(ReadOnlyAdmin):
    list_display = ("string", "locale", "check_name", "severity")
    list_select_related = ("string", "locale")


@admin.register(CardsState)
class CardsStateAdmin(ReadOnlyAdmin):
    pass


@admin.register(UserPreference)
class UserPreferenceAdmin(admin.ModelAdmin):
    list_display = ("user", "language")


@admin.register(AuditChainHead)
class AuditChainHeadAdmin(ReadOnlyAdmin):
    list_display = ("last_seq", "last_hash", "count")


@admin.register(ToolEmbedding)
class ToolEmbeddingAdmin(ReadOnlyAdmin):
    """Written only by the embedding worker; shown to check what a tool's vector came from."""

    list_display = ("tool", "model_id", "text_sha256", "dim", "embedded_at")
    list_filter = ("model_id",)
    search_fields = ("tool__declared_id", "text_sha256")
    exclude = ("vector",)


@admin.register(RetrievalEvaluation)
class RetrievalEvaluationAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "model_id", "cases", "recall_at_1", "recall_at_5", "recall_at_10", "mrr", "run_by")
