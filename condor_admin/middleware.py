"""The middleware of our own: the request-body cap, and the console-only wrappers that let API calls skip the
console's middleware."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.module_loading import import_string

API_PREFIX = "/api/"  # condor_admin.urls mounts the API here


class RequestBodyLimitMiddleware:
    """Every request body above CONDOR_MAX_REQUEST_BYTES is a 413: JSON under the API, plain text elsewhere.

    The manifest import is the one endpoint with its own, larger cap (CONDOR_MAX_MANIFEST_BYTES); it answers
    its own 413. Django's DATA_UPLOAD_MAX_MEMORY_SIZE sits above that cap for the import's sake, so without this
    every other endpoint would buffer and parse up to 33 MB. Under WSGI a body without Content-Length is read
    as empty, so the declared length is the whole story.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._manifest_path: str | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0
        limit = settings.CONDOR_MAX_REQUEST_BYTES
        if size > limit and not self._is_manifest_import(request):
            detail = f"request body is {size} bytes; the limit is {limit} bytes (CONDOR_MAX_REQUEST_BYTES)"
            if request.path_info.startswith(API_PREFIX):
                return JsonResponse({"detail": detail}, status=413)
            return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def _is_manifest_import(self, request: HttpRequest) -> bool:
        if self._manifest_path is None:
            self._manifest_path = reverse("api:import_revision")
        return request.method == "POST" and request.path_info == self._manifest_path


# --- the console's middleware, skipped by token-authenticated API calls ---------------------------------------


def is_token_api_call(request: HttpRequest) -> bool:
    """A runtime's call: under /api/ with a bearer token. It has no session, cookie, form, language or page."""
    return request.path_info.startswith(API_PREFIX) and request.META.get("HTTP_AUTHORIZATION", "").startswith("Bearer ")


class ConsoleOnly:
    """Mixin for `console_only`: the middleware it is mixed into runs for everything but a token-authenticated API
    call, which it passes straight on.

    The console needs sessions, languages, messages, htmx, static files and a CSP; a bearer-token call to the API
    needs none of them, and on a two-core server they cost it about a millisecond of CPU per call. Browsers
    reaching /api/ (the docs page, a call without a token) still get the whole stack, CSP included.
    """

    get_response: Callable[[HttpRequest], HttpResponse]

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_token_api_call(request):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]  # the middleware this is mixed into


def console_only(path: str) -> type:
    """The middleware at `path`, subclassed so that API calls skip it. A subclass, so that Django's checks for
    the admin's middleware still recognise it. Only for middleware without view/exception/template hooks:
    Django would call those hooks for API calls too, so a wrapped one would half-run."""
    base = import_string(path)
    hooks = [h for h in ("process_view", "process_exception", "process_template_response") if hasattr(base, h)]
    if hooks:
        raise ImproperlyConfigured(
            f"console_only({path!r}): it has {', '.join(hooks)}, which API calls would still run"
        )
    return type(f"Console{base.__name__}", (ConsoleOnly, base), {})


# settings.MIDDLEWARE names these: each is the middleware its name ends with, skipped by API calls.
# (Common (Content-Length), CSRF, clickjacking and security headers stay on every request: cheap, and Django's
# deploy checks look for them.)
ConsoleWhiteNoiseMiddleware = console_only("whitenoise.middleware.WhiteNoiseMiddleware")


class ConsoleCSPMiddleware(console_only("csp.middleware.CSPMiddleware")):  # type: ignore[misc]
    """The console's policy for pages; a token-authenticated API call's JSON gets a fixed policy that allows
    nothing at all (nothing of it is ever rendered), without building a policy per call."""

    API_POLICY = "default-src 'none'; frame-ancestors 'none'"

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = super().__call__(request)
        if is_token_api_call(request):
            response.headers.setdefault("Content-Security-Policy", self.API_POLICY)
        return response


ConsoleSessionMiddleware = console_only("django.contrib.sessions.middleware.SessionMiddleware")
ConsoleLocaleMiddleware = console_only("django.middleware.locale.LocaleMiddleware")
ConsoleAuthenticationMiddleware = console_only("django.contrib.auth.middleware.AuthenticationMiddleware")
ConsoleUserLanguageMiddleware = console_only("catalog.web.middleware.UserLanguageMiddleware")
ConsoleMessageMiddleware = console_only("django.contrib.messages.middleware.MessageMiddleware")
ConsoleHtmxMiddleware = console_only("django_htmx.middleware.HtmxMiddleware")
