"""The console's 403, 404, 500 and 503 answers: a page in the person's language with the way back, or for an htmx
request a one-line text that console.js shows where the person clicked (never a whole page swapped into a row).

API paths keep their JSON errors (django-ninja answers those before these handlers are reached, the database's
absence included: condor_admin.api answers it 503 with Retry-After).
"""

from __future__ import annotations

import sys
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import loader
from django.utils.translation import get_language
from django.utils.translation import gettext as _

# Seconds a browser or a script is told to wait while the database is away: a PostgreSQL restart or failover is over
# within a few (tests/integration/faults/), as the API tells the runtime (condor_admin.api).
RETRY_AFTER_SECONDS = 5


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def forbidden(request: HttpRequest, exception: Any = None) -> HttpResponse:
    reason = str(exception or "") or _("You may not open this page.")
    if _is_htmx(request):
        return HttpResponse(reason, status=403, content_type="text/plain; charset=utf-8")
    return render(request, "403.html", {"reason": reason}, status=403)


def not_found(request: HttpRequest, exception: Any = None) -> HttpResponse:
    if _is_htmx(request):
        return HttpResponse(
            _("Not found: it may have been removed."), status=404, content_type="text/plain; charset=utf-8"
        )
    return render(request, "404.html", {"path": request.path}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    # No context processors and no database reads: the error may be the database itself.
    # Django calls this handler while it handles the exception (in its `except` block), so sys.exc_info() names it,
    # whether a view or a middleware (the session, the signed-in user) raised it.
    if isinstance(sys.exc_info()[1], (OperationalError, InterfaceError)):
        return database_unavailable(request)
    if _is_htmx(request):
        return HttpResponse(
            _("Something went wrong on our side; nothing was changed. Try again."),
            status=500,
            content_type="text/plain; charset=utf-8",
        )
    return HttpResponse(loader.get_template("500.html").render({"LANGUAGE_CODE": get_language()}), status=500)


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """The database is away (a restart, a failover) or refused the connection: a 503 with Retry-After, which says
    "in a moment" to the person and to any proxy or monitor, rather than the 500 a bug gets. Rendered as the 500
    page is, without context processors, so nothing here needs the database."""
    if _is_htmx(request):
        response = HttpResponse(
            _("The console's database is not reachable right now; nothing was changed. Try again in a moment."),
            status=503,
            content_type="text/plain; charset=utf-8",
        )
    else:
        context = {"LANGUAGE_CODE": get_language(), "retry_after": RETRY_AFTER_SECONDS}
        response = HttpResponse(loader.get_template("503.html").render(context), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
