"""The one NinjaAPI instance, mounted at /api/v1/."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from approvals.api import router as approvals_router
from catalog.api import router as catalog_router
from catalog.cards.api import router as cards_router
from catalog.owners_api import router as owners_router

api = NinjaAPI(
    title="Condor Admin API",
    version="1",
    description="The runtime's API: catalog manifests, approvals, tool-RAG, card strings.",
    urls_namespace="api",
)
api.add_router("/catalog", catalog_router)
api.add_router("/owners", owners_router)
api.add_router("/approvals", approvals_router)
api.add_router("/cards", cards_router)


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return api.create_response(request, {"detail": "missing, unknown, expired or revoked bearer token"}, status=401)


@api.exception_handler(ValidationError)
def invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in exc.errors]
    return api.create_response(request, {"detail": "invalid request", "errors": errors}, status=422)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)
