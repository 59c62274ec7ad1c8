"""The middleware of our own: the request-body cap, `Cache-Control: no-store` on what the app renders, the
session's idle and absolute limits, and the console-only wrappers that let API calls skip the console's
middleware."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import SESSION_KEY, logout
from django.contrib.sessions.backends.base import SessionBase
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import resolve_url
from django.urls import reverse
from django.utils.module_loading import import_string
from django.utils.translation import ngettext

API_PREFIX = "/api/"  # condor_admin.urls mounts the API here


class RequestBodyLimitMiddleware:
    """Every request body above CONDOR_MAX_REQUEST_BYTES is a 413: JSON under the API, plain text elsewhere.

    The manifest import and the OTLP trace export have their own, larger caps (CONDOR_MAX_MANIFEST_BYTES,
    CONDOR_OTLP_MAX_BYTES); they answer their own 413. Django's DATA_UPLOAD_MAX_MEMORY_SIZE sits above the
    import's cap for its sake, so without this every other endpoint would buffer and parse up to 33 MB. Under
    WSGI a body without Content-Length is read as empty, so the declared length is the whole story.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._own_cap_paths: frozenset[str] | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0
        limit = settings.CONDOR_MAX_REQUEST_BYTES
        if size > limit and not self._has_own_cap(request):
            detail = f"request body is {size} bytes; the limit is {limit} bytes (CONDOR_MAX_REQUEST_BYTES)"
            if request.path_info.startswith(API_PREFIX):
                return JsonResponse({"detail": detail}, status=413)
            return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def _has_own_cap(self, request: HttpRequest) -> bool:
        """The manifest import (CONDOR_MAX_MANIFEST_BYTES) and the OTLP export (CONDOR_OTLP_MAX_BYTES) check their
        own, larger caps and answer their own 413."""
        if self._own_cap_paths is None:
            self._own_cap_paths = frozenset({reverse("api:import_revision"), reverse("api:export_traces")})
        return request.method == "POST" and request.path_info in self._own_cap_paths


class NoStoreMiddleware:
    """Every answer the app renders is `Cache-Control: no-store, private` unless its view chose its own caching.

    Pages and API answers carry patient references (the approvals queue, a request's arguments), tokens and who
    may do what; no browser cache, back button or proxy may keep them. The one rule for all is simpler to trust
    than a list of the pages that carry patient data. Views that cache deliberately set their own header and keep
    it: the card bundles and a tool's policy (`no-cache` with an ETag, no patient data), the admin's `never_cache`.
    A 304 keeps what the cached answer said. Static files never get here (WhiteNoise answers them first, with
    their own long-lived caching).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 304 and "Cache-Control" not in response:
            response["Cache-Control"] = "no-store, private"
        return response


# --- the session's limits ----------------------------------------------------------------------------------------

SIGNED_IN_AT = "condor_signed_in_at"  # epoch seconds of the sign-in
LAST_ACTIVITY = "condor_last_activity"  # epoch seconds, written at most once a minute
ACTIVITY_EVERY_SECONDS = 60
# Sent by the page's own polls (the approvals counts and queue): a screen left open is not a person at work.
POLL_HEADER = "X-Condor-Poll"


def now() -> float:
    """The clock the session limits are measured against (tests move it)."""
    return time.time()


def session_limit_reached(session: SessionBase, at: float) -> str | None:
    """Why a signed-in session is over at `at` (a message for the person), or None while it is not."""
    started, last = session.get(SIGNED_IN_AT), session.get(LAST_ACTIVITY)
    if started is not None and at - started >= settings.SESSION_COOKIE_AGE:
        hours = max(1, round(settings.SESSION_COOKIE_AGE / 3600))
        return ngettext(
            "You were signed out: a sign-in lasts at most %(hours)s hour. Please sign in again.",
            "You were signed out: a sign-in lasts at most %(hours)s hours. Please sign in again.",
            hours,
        ) % {"hours": hours}
    minutes = settings.CONDOR_SESSION_IDLE_MINUTES
    if last is not None and at - last >= minutes * 60:
        return ngettext(
            "You were signed out after %(minutes)s minute without activity. Please sign in again.",
            "You were signed out after %(minutes)s minutes without activity. Please sign in again.",
            minutes,
        ) % {"minutes": minutes}
    return None


class SessionLimitsMiddleware:
    """A sign-in ends after CONDOR_SESSION_IDLE_MINUTES without activity and SESSION_COOKIE_AGE after it began.

    Django's sessions as documented: the sign-in stamps its time and sets the session's expiry to a fixed date
    (`set_expiry`), so saving the session never extends it; the last activity is stored in the session at most
    once a minute (not SESSION_SAVE_EVERY_REQUEST, a write per page), which measures idleness to the minute, on
    the early side. A request past either limit is signed out before its view runs, and the sign-in page says why.
    An htmx request that would be sent to sign in (a fragment, a poll) gets a 401 with HX-Redirect instead, so the
    whole page goes to the sign-in page rather than a sign-in form being swapped into a table.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_token_api_call(request):
            return self.get_response(request)
        session = request.session
        key_before = session.session_key
        if SESSION_KEY in session:
            at = now()
            reason = session_limit_reached(session, at)
            if reason:
                logout(request)
                messages.info(request, reason)
            elif request.headers.get(POLL_HEADER) != "true":
                last = session.get(LAST_ACTIVITY)
                if last is None or at - last >= ACTIVITY_EVERY_SECONDS:
                    session[LAST_ACTIVITY] = int(at)
        response = self.get_response(request)
        # Signed in by this request: sign-in cycles the session key (a session from before these limits, too).
        if SESSION_KEY in session and (session.session_key != key_before or SIGNED_IN_AT not in session):
            at = int(now())
            session[SIGNED_IN_AT] = session[LAST_ACTIVITY] = at
            session.set_expiry(timedelta(seconds=settings.SESSION_COOKIE_AGE))
        if request.headers.get("HX-Request") == "true" and _is_sign_in_redirect(response):
            return _htmx_sign_in(request, response)
        return response


def _is_sign_in_redirect(response: HttpResponse) -> bool:
    if response.status_code not in (301, 302, 303, 307, 308):
        return False
    return urlsplit(response.get("Location", "")).path == resolve_url(settings.LOGIN_URL)


def _htmx_sign_in(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """401, and HX-Redirect to the sign-in page, back to the page the person was on (not the fragment's URL)."""
    page = urlsplit(request.headers.get("HX-Current-URL", ""))
    back = (page.path or "/") + (f"?{page.query}" if page.query else "")
    answer = HttpResponse(status=401)
    answer["HX-Redirect"] = f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': back})}"
    answer.cookies = response.cookies
    return answer


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
