"""The home page: the catalog at a glance."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from catalog.core.access import page
from catalog.selectors.dashboard import catalog_summary, dashboard


@page("home")
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "catalog/dashboard.html", {"summaries": catalog_summary(), **dashboard()})
