"""The console's 403, 404 and 500 answers: a page in the person's language with the way back, or for an htmx
request a one-line text that console.js shows where the person clicked (never a whole page swapped into a row).

API paths keep their JSON errors (django-ninja answers those before these handlers are reached).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import loader
from django.utils.translation import gettext as _


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
    if _is_htmx(request):
        return HttpResponse(
            _("Something went wrong on our side; nothing was changed. Try again."),
            status=500,
            content_type="text/plain; charset=utf-8",
        )
    return HttpResponse(loader.get_template("500.html").render({}), status=500)
