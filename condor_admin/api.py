"""The one NinjaAPI instance, mounted at /api/v1/."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from csp.decorators import csp_update
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import URLPattern
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.schema import BODY_CONTENT_TYPES, REF_TEMPLATE, OpenAPISchema
from ninja.operation import Operation
from ninja.schema import NinjaGenerateJsonSchema

from approvals.api import router as approvals_router
from catalog.api.findings import router as findings_router
from catalog.api.owners import router as owners_router
from catalog.api.policy import router as policy_router
from catalog.api.revisions import router as revisions_router
from catalog.cards.api import router as cards_router
from catalog.core.api_errors import ErrorOut
from catalog.core.api_input import BodyParser, body_refusal, unstorable_text
from catalog.rag.api import router as rag_router
from catalog.usage.api import router as usage_router
from catalog.usage.otlp_api import router as otlp_router

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

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        return CondorOpenAPISchema(self, path_prefix)


class CondorOpenAPISchema(OpenAPISchema):
    """The schema names every answer an operation can give. An endpoint declares its own (`response=`); the answers
    the API's machinery gives on every operation alike are added here, beside that machinery: the bearer check
    (401, 403), input validation and the URL check (422), ninja's JSON parser (400), the body cap (413,
    condor_admin/middleware.py) and the database handler (503). Each is an ErrorOut."""

    def responses(self, operation: Operation) -> dict[int, Any]:
        answers = super().responses(operation)
        for status, (description, headers) in machinery_answers(operation).items():
            answer = answers.setdefault(status, {"description": description, "content": JSON_ERROR})
            if headers:
                answer["headers"] = {**headers, **answer.get("headers", {})}
        self.schemas["ErrorOut"] = ErrorOut.model_json_schema(
            ref_template=REF_TEMPLATE, schema_generator=NinjaGenerateJsonSchema, mode="serialization"
        )
        return dict(sorted(answers.items()))


JSON_ERROR = {"application/json": {"schema": {"$ref": REF_TEMPLATE.format(model="ErrorOut")}}}


def machinery_answers(operation: Operation) -> dict[int, tuple[str, dict[str, Any]]]:
    """status -> (description, response headers) of what answers before or around the endpoint's own code."""
    answers: dict[int, tuple[str, dict[str, Any]]] = {
        # Any query string can carry a NUL (_url_problems), so every operation can answer 422.
        422: ("invalid parameters or body: `errors` names each problem and where it is", {}),
        503: (
            "the database is unavailable; retry after `Retry-After` seconds",
            {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}},
        ),
    }
    if operation.auth_callbacks:
        answers[401] = (
            "missing, unknown, expired or revoked bearer token",
            {"WWW-Authenticate": {"required": True, "schema": {"type": "string", "const": "Bearer"}}},
        )
        answers[403] = ("the token lacks the scope this operation needs", {})
    if any(model.__ninja_param_source__ in BODY_CONTENT_TYPES for model in operation.models):
        answers[400] = ("the body is not JSON", {})
    if {"POST", "PUT", "PATCH"} & set(operation.methods):
        limit = settings.CONDOR_MAX_REQUEST_BYTES
        answers[413] = (f"the body is over CONDOR_MAX_REQUEST_BYTES ({limit} bytes here)", {})
    return answers


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
    parser=BodyParser(),  # a repeated JSON key is a 422 naming where, not "the last one wins"
    # Swagger UI is served from ninja's static files (no CDN, no inline script); its icons are data: SVGs,
    # so the docs page alone may load data: images. Everything else keeps the site-wide policy.
    docs_decorator=csp_update({"img-src": ["data:"]}),
)
api.add_router("/catalog", revisions_router)
api.add_router("/otlp", otlp_router)
api.add_router("/catalog", findings_router)
api.add_router("/catalog", policy_router)
api.add_router("/owners", owners_router)
api.add_router("/approvals", approvals_router)
api.add_router("/cards", cards_router)
api.add_router("/rag", rag_router)
api.add_router("/usage", usage_router)


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = api.create_response(request, {"detail": "missing, unknown, expired or revoked bearer token"}, status=401)
    response["WWW-Authenticate"] = "Bearer"  # RFC 9110: a 401 names the scheme that would be accepted
    return response


@api.exception_handler(ValidationError)
def invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in exc.errors]
    return api.create_response(request, {"detail": "invalid request", "errors": errors}, status=422)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    refused = body_refusal(exc)
    if refused is not None:
        return api.create_response(request, refused[1], status=refused[0])
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
