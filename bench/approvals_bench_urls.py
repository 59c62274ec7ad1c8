"""The app's URLs plus the baseline the benchmark compares evaluate against: a bare Django view that
inserts the same approval-request row, with no token, no policy, no idempotency check and no audit event."""

from __future__ import annotations

import json
from datetime import timedelta
from functools import cache

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from approvals.domain import args_sha256, canonical_copy
from approvals.models import ApprovalRequest
from catalog.models import Tool
from condor_admin.urls import urlpatterns as app_urlpatterns


@cache
def _tool_pk(declared_id: str) -> int:
    return Tool.objects.live().get(declared_id=declared_id).pk


@csrf_exempt
def bare_insert(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    now = timezone.now()
    row = ApprovalRequest.objects.create(
        idempotency_key=body["idempotencyKey"],
        submitted_via="bench-bare",
        tool_id=_tool_pk(body["tool"]),
        tool_system="condor",
        tool_declared_id=body["tool"],
        requested_name=body["tool"],
        profile=body["profile"],
        dispatch_mode=body["dispatchMode"],
        run_id=body["runId"],
        requested_by=body["requestedBy"],
        patient_ref=body["patientRef"],
        proposed_args=canonical_copy(body["args"]),
        proposed_sha256=args_sha256(body["args"]),
        policy_domain="medication",
        hitl_tier="high",
        tier_key="high",
        policy_reason="tier-high",
        created_at=now,
        expires_at=now + timedelta(seconds=900),
    )
    return JsonResponse({"id": str(row.pk)}, status=201)


urlpatterns = [*app_urlpatterns, path("api/bench/bare-insert", bare_insert)]
