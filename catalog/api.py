"""Catalog API: manifest import and revision reads."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Query, Router, Schema, Status

from .auth import ScopedBearer
from .domain.manifest import ManifestError
from .domain.rules import RULES
from .domain.vocabulary import System
from .models import CatalogRevision, Severity, ToolChange
from .selectors import findings_list
from .services.imports import catalog_import

router = Router(tags=["catalog"], auth=ScopedBearer("catalog"))


class ErrorOut(Schema):
    detail: str
    errors: list[str] = []


class RevisionOut(Schema):
    system: str
    number: int
    format: str
    manifest_sha256: str
    source_repository: str
    source_commit: str
    imported_via: str
    created_at: datetime
    baseline_count: int | None
    tool_count: int
    business_tool_count: int
    added_count: int
    removed_count: int
    changed_count: int
    safety_change_count: int


class ImportOut(Schema):
    unchanged: bool
    summary: str
    revision: RevisionOut | None
    added: list[str]
    removed: list[str]
    changed: list[str]
    safety_relevant: list[str]


class ChangeOut(Schema):
    declared_id: str
    kind: str
    fields: dict[str, list[object]]
    safety_fields: list[str]


class RevisionDetailOut(RevisionOut):
    config_changes: dict[str, object]
    changes: list[ChangeOut]


@router.post(
    "/revisions",
    response={200: ImportOut, 201: ImportOut, 413: ErrorOut, 422: ErrorOut},
    summary="Import a catalog manifest (the request body is the manifest JSON)",
)
def import_revision(request: HttpRequest) -> Status[dict[str, object]]:
    limit = settings.CONDOR_MAX_MANIFEST_BYTES
    # Check the declared length before reading the body: an oversized manifest is never buffered.
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    size = declared or len(request.body)
    if size > limit:
        return Status(
            413, {"detail": f"manifest is {size} bytes; the limit is {limit} bytes (CONDOR_MAX_MANIFEST_BYTES)"}
        )
    token = request.auth  # type: ignore[attr-defined]
    try:
        result = catalog_import(raw=request.body, via=f"api token {token.name}")
    except ManifestError as exc:
        return Status(
            422,
            {
                "detail": f"manifest refused: {len(exc.problems)} problem(s); nothing was changed",
                "errors": exc.problems,
            },
        )
    body = {
        "unchanged": result.unchanged,
        "summary": result.summary(),
        "revision": result.revision,
        "added": result.added,
        "removed": result.removed,
        "changed": result.changed,
        "safety_relevant": result.safety_relevant,
    }
    return Status(200 if result.unchanged else 201, body)


@router.get("/revisions", response=list[RevisionOut], summary="Recent revisions, newest first")
def list_revisions(request: HttpRequest, system: str | None = None, limit: int = 50) -> list[CatalogRevision]:
    qs = CatalogRevision.objects.order_by("-created_at", "-pk")
    if system:
        qs = qs.filter(system=system)
    return list(qs[: max(1, min(limit, 200))])


@router.get("/revisions/{system}/{number}", response=RevisionDetailOut, summary="One revision with its changes")
def get_revision(request: HttpRequest, system: str, number: int) -> dict[str, object]:
    revision = get_object_or_404(CatalogRevision, system=system, number=number)
    changes = ToolChange.objects.filter(revision=revision).order_by("declared_id")
    return {
        **RevisionOut.from_orm(revision).dict(),
        "config_changes": revision.config_changes,
        "changes": list(changes),
    }


class FindingOut(Schema):
    system: str
    tool: str | None
    owner: str | None
    rule: str
    severity: str
    message: str
    details: dict[str, object]
    revision: int
    waived: bool
    waived_until: datetime | None
    waived_by: str | None


# The largest page of findings one call returns: ?limit=100000 gets this many (and says so), not a 422.
FINDINGS_MAX_LIMIT = 500


class FindingPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[FindingOut]


@router.get("/findings", response={200: FindingPage, 422: ErrorOut}, summary="Findings, filterable")
def list_findings(
    request: HttpRequest,
    rule: str | None = None,
    severity: str | None = None,
    system: str | None = None,
    owner: str | None = Query(None, description='team id, or "-" for unowned tools'),
    waived: bool | None = None,
    limit: int = Query(100, ge=1, description=f"page size; above {FINDINGS_MAX_LIMIT} is clamped to it"),
    # Bounded: an offset past a 64-bit integer made the database fail (a 500) instead of answering [].
    offset: int = Query(0, ge=0, le=1_000_000),
) -> Status[dict[str, object]]:
    problems = []
    if rule and rule not in RULES:
        problems.append(f"rule: unknown rule {rule!r}; known rules are {', '.join(sorted(RULES))}")
    if severity and severity not in Severity.values:
        problems.append(f"severity: expected one of {', '.join(Severity.values)}")
    if system and system not in {s.value for s in System}:
        problems.append(f"system: expected one of {', '.join(s.value for s in System)}")
    if problems:
        return Status(422, {"detail": "invalid filter", "errors": problems})
    limit = min(limit, FINDINGS_MAX_LIMIT)  # the answer's `limit` says what was applied
    qs = findings_list(rule=rule, severity=severity, system=system, owner=owner, waived=waived)
    items = [
        {
            "system": f.system,
            "tool": f.tool.declared_id if f.tool else None,
            "owner": f.tool.owner.slug if f.tool and f.tool.owner else None,
            "rule": f.rule,
            "severity": f.severity,
            "message": f.message,
            "details": f.details,
            "revision": f.revision.number,
            "waived": f.waived_until is not None,
            "waived_until": f.waived_until,
            "waived_by": f.waived_by,
        }
        for f in qs[offset : offset + limit]
    ]
    return Status(200, {"count": qs.count(), "limit": limit, "offset": offset, "items": items})
