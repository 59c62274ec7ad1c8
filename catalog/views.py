"""Console pages. The full console arrives with its own issue; this is the signed-in landing page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .selectors import catalog_summary


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "catalog/home.html", {"summaries": catalog_summary()})
