"""The translator's workspace, mounted at /cards/ (names in the `cards:` namespace)."""

from __future__ import annotations

from django.urls import path

from catalog.cards import views

app_name = "cards"

urlpatterns = [
    path("", views.matrix_view, name="matrix"),
    path("panel", views.panel_view, name="panel"),
    path("save", views.save_view, name="save"),
    path("review", views.review_view, name="review"),
    path("coverage/", views.coverage_view, name="coverage"),
    path("export", views.export_view, name="export"),
]
