"""Catalog API: manifest import and revision reads."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Path, Query, Router, Schema, Status

from catalog.core.api_errors import ErrorOut
from catalog.core.auth import ScopedBearer
from catalog.domain.manifest import DIALECTS, PROBLEMS_LISTED_MAX, ManifestError
from catalog.domain.vocabulary import SYSTEM_MAX, SYSTEM_PATTERN
from catalog.models import CatalogRevision, ImportJob, ToolChange
from catalog.selectors.effect import clinical_profiles_exist
from catalog.services.import_jobs import import_job_create, import_job_phase, result_body
from catalog.services.imports import catalog_import

router = Router(tags=["catalog"], auth=ScopedBearer("catalog:read"))

# The largest page of revisions one call returns: ?limit=100000 gets this many, not a 422.
REVISIONS_MAX_LIMIT = 200
SYSTEM_DOC = "condor, tucan or mcp:<server id>"

# The formats the importer accepts, from the dialect registry: a hand-written list here once left `mcp-tools/v1`
# accepted but undocumented.
MANIFEST_FORMATS = sorted(DIALECTS)

# The body is read raw (the size is checked before it is buffered), so ninja cannot describe it: this does.
MANIFEST_BODY = {
    "required": True,
    "description": f"the manifest, in one of the formats TOOLS.md describes ({', '.join(MANIFEST_FORMATS)}); at most "
    f"{settings.CONDOR_MAX_MANIFEST_BYTES} bytes (CONDOR_MAX_MANIFEST_BYTES), refused with 413 above it; above "
    f"{settings.CONDOR_ASYNC_IMPORT_BYTES} bytes (CONDOR_ASYNC_IMPORT_BYTES) a worker imports it (202, status URL)",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["format"],
                "properties": {"format": {"enum": MANIFEST_FORMATS}},
            }
        }
    },
}


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


class ImportJobOut(Schema):
    job: int
    state: str
    phase: str
    status_url: str
    created_at: datetime
    finished_at: datetime | None
    result: ImportOut | None
    errors: list[str]


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
    response={200: ImportOut, 201: ImportOut, 202: ImportJobOut, 403: ErrorOut, 413: ErrorOut, 422: ErrorOut},
    summary="Import a catalog manifest (the request body is the manifest JSON)",
    description="403 also when the token has no owner once a clinical profile exists; 422 counts every problem "
    f"of a refused manifest in `detail` and lists the first {PROBLEMS_LISTED_MAX:,} in `errors` (then one line: how "
    "many more). A manifest above CONDOR_ASYNC_IMPORT_BYTES is imported by a worker: 202 "
    "at once with the job and its `status_url` (GET it: phase, then the same result or errors).",
    openapi_extra={"requestBody": MANIFEST_BODY},
    # Importing replaces the whole catalog: a token that only reads or exports must not be able to.
    auth=ScopedBearer("catalog:write"),
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
    if token.owner_id is None and clinical_profiles_exist():
        return Status(
            403,
            {
                "detail": f"token {token.name!r} has no owner: once a clinical profile exists every import names the "
                "person who answers for it (a sign-off must come from someone else). Issue a token in the console "
                "(its issuer owns it) or with `manage.py create_api_token --owner USERNAME`; nothing was changed"
            },
        )
    via = f"api token {token.name}"
    if size > settings.CONDOR_ASYNC_IMPORT_BYTES:
        job = import_job_create(raw=request.body, via=via, imported_by=token.owner)
        return Status(202, job_body(job))
    try:
        result = catalog_import(raw=request.body, via=via, imported_by=token.owner)
    except ManifestError as exc:
        return Status(422, refusal_body(exc))
    return Status(200 if result.unchanged else 201, {**result_body(result), "revision": result.revision})


def refusal_body(exc: ManifestError) -> dict[str, object]:
    """The 422 of a refused manifest: `detail` counts every problem, `errors` lists the first ones (bounded)."""
    listed = exc.listed()
    cut = f"; the first {PROBLEMS_LISTED_MAX:,} are listed" if len(exc.problems) > PROBLEMS_LISTED_MAX else ""
    return {"detail": f"manifest refused: {len(exc.problems):,} problem(s){cut}; nothing was changed", "errors": listed}


def job_body(job: ImportJob) -> dict[str, object]:
    """An import job as the API shows it; `result` is what the synchronous import would have answered."""
    done = job.state == ImportJob.State.DONE
    return {
        "job": job.pk,
        "state": job.state,
        "phase": import_job_phase(job),
        "status_url": reverse("api:import_job", kwargs={"job_id": job.pk}),
        "created_at": job.created_at,
        "finished_at": job.finished_at,
        "result": {**job.result, "revision": job.revision} if done else None,
        "errors": job.errors,
    }


@router.get(
    "/imports/{job_id}",
    response={200: ImportJobOut, 404: ErrorOut},
    summary="An import answered with 202: its state, phase and result",
    url_name="import_job",
    # The same scope as the import: the job holds the manifest until it ran.
    auth=ScopedBearer("catalog:write"),
)
def import_job(request: HttpRequest, job_id: int = Path(..., ge=1, le=2**63 - 1)) -> dict[str, object]:
    job = get_object_or_404(ImportJob.objects.select_related("revision").defer("manifest"), pk=job_id)
    return job_body(job)


@router.get("/revisions", response=list[RevisionOut], summary="Recent revisions, newest first")
def list_revisions(
    request: HttpRequest,
    system: str | None = Query(None, max_length=SYSTEM_MAX, pattern=SYSTEM_PATTERN, description=SYSTEM_DOC),
    limit: int = Query(50, description=f"page size; below 1 is 1, above {REVISIONS_MAX_LIMIT} is clamped to it"),
) -> list[CatalogRevision]:
    qs = CatalogRevision.objects.order_by("-created_at", "-pk")
    if system:
        qs = qs.filter(system=system)
    return list(qs[: max(1, min(limit, REVISIONS_MAX_LIMIT))])


@router.get(
    "/revisions/{system}/{number}",
    response={200: RevisionDetailOut, 404: ErrorOut},
    summary="One revision with its changes",
)
def get_revision(
    request: HttpRequest,
    system: str = Path(..., max_length=SYSTEM_MAX, pattern=SYSTEM_PATTERN, description=SYSTEM_DOC),
    number: int = Path(..., ge=1, le=2**31 - 1),
) -> dict[str, object]:
    revision = get_object_or_404(CatalogRevision, system=system, number=number)
    changes = ToolChange.objects.filter(revision=revision).order_by("declared_id")
    return {
        **RevisionOut.from_orm(revision).dict(),
        "config_changes": revision.config_changes,
        "changes": list(changes),
    }
