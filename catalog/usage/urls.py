"""Runtime telemetry's pages, mounted at /usage/ (names in the `usage:` namespace)."""

from __future__ import annotations

from django.urls import path

from catalog.usage import views

app_name = "usage"
urlpatterns = [
    path("unknown/", views.unknown_page, name="unknown"),
    path("unknown/verdict", views.verdict_view, name="unknown-verdict"),
]
