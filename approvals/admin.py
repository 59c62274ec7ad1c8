"""Approval requests in the Django admin: visible for raw maintenance, never edited there (transitions go
through the services, each with its audit event)."""

from __future__ import annotations

from django.contrib import admin

from approvals.models import AllowedCall, ApprovalRequest
from catalog.core.admin import ReadOnlyAdmin


@admin.register(ApprovalRequest)
class ApprovalRequestAdmin(ReadOnlyAdmin):
    list_display = ("tool_declared_id", "tier_key", "state", "policy_domain", "requested_by", "created_at")
    list_filter = ("state", "tier_key", "policy_domain", "flagged")
    search_fields = (
        "id",
        "idempotency_key",
        "tool_declared_id",
        "run_id",
        "patient_ref",
        "requested_by",
        "tool_call_id",
        "candidate_set_id",
    )
    date_hierarchy = "created_at"


@admin.register(AllowedCall)
class AllowedCallAdmin(ReadOnlyAdmin):
    list_display = ("tool", "patient_ref", "idempotency_key", "created_at")
    search_fields = ("patient_ref", "idempotency_key", "args_sha256")
    date_hierarchy = "created_at"
