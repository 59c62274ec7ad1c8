"""The home page: the catalog at a glance."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from catalog.core.access import page
from catalog.selectors.dashboard import catalog_summary, dashboard, findings_history
from catalog.usage.selectors.health import dashboard_health


@page("home")
def home(request: HttpRequest) -> HttpResponse:
    context = {
        "summaries": catalog_summary(),
        **dashboard(),
        "health": dashboard_health(),
        "findings_history": findings_history(),
    }
    return render(request, "catalog/dashboard.html", context)
