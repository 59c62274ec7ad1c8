"""Console pages. Thin: parse input, call one selector or service, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..selectors import catalog_summary


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "catalog/home.html", {"summaries": catalog_summary()})
