"""The one NinjaAPI instance, mounted at /api/v1/."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from csp.decorators import csp_update
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import URLPattern
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from approvals.api import router as approvals_router
from catalog.api.findings import router as findings_router
from catalog.api.owners import router as owners_router
from catalog.api.policy import router as policy_router
from catalog.api.revisions import router as revisions_router
from catalog.cards.api import router as cards_router
from catalog.core.api_input import unstorable_text
from catalog.rag.api import router as rag_router

log = logging.getLogger(__name__)


class CondorAPI(NinjaAPI):
    """Every refusal says what was wrong, in JSON. Two answers come from before ninja's exception handlers
    and need a wrapper around each view: the 405 for a method an operation lacks (plain text from ninja),
    and a NUL character in the URL (PostgreSQL cannot compare text with it: a 500 deep in a query)."""

    @property
    def urls(self) -> Any:
        patterns, app_name, namespace = super().urls
        for pattern in patterns:
            if isinstance(pattern, URLPattern):
                pattern.callback = _api_view(pattern.callback)
        return patterns, app_name, namespace


def _api_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)  # keeps ninja's csrf_exempt
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        problems = _url_problems(request, kwargs)
        if problems:
            return api.create_response(request, {"detail": "invalid request", "errors": problems}, status=422)
        response = view(request, *args, **kwargs)
        if isinstance(response, HttpResponseNotAllowed):
            allowed = response["Allow"]
            response = api.create_response(
                request, {"detail": f"method {request.method} not allowed here; use {allowed}"}, status=405
            )
            response["Allow"] = allowed
        return response

    return wrapped


def _url_problems(request: HttpRequest, path: dict[str, Any]) -> list[str]:
    params = [("path", name, [value]) for name, value in path.items()]
    params += [("query", name, values) for name, values in request.GET.lists()]
    problems = []
    for where, name, values in params:
        problem = next(filter(None, (unstorable_text(v) for v in [name, *values])), None)
        if problem:
            problems.append(f"{where}.{name}: {problem}")
    return problems


api = CondorAPI(
    title="Condor Admin API",
    version="1",
    description="The runtime's API: catalog manifests, approvals, tool-RAG, card strings.",
    urls_namespace="api",
    # Swagger UI is served from ninja's static files (no CDN, no inline script); its icons are data: SVGs,
    # so the docs page alone may load data: images. Everything else keeps the site-wide policy.
    docs_decorator=csp_update({"img-src": ["data:"]}),
)
api.add_router("/catalog", revisions_router)
api.add_router("/catalog", findings_router)
api.add_router("/catalog", policy_router)
api.add_router("/owners", owners_router)
api.add_router("/approvals", approvals_router)
api.add_router("/cards", cards_router)
api.add_router("/rag", rag_router)


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


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def database_unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    """The database is away (restart, failover) or refused the connection: a 503 the runtime can recognise as
    transient and retry (with its idempotency key), not the 500 HTML page a bug gets (tests/faults/)."""
    log.error("API %s %s answered 503, database unavailable: %s", request.method, request.path, exc)
    response = api.create_response(
        request, {"detail": "the database is unavailable; retry in a few seconds"}, status=503
    )
    response["Retry-After"] = "5"
    return response
