from __future__ import annotations

from django.urls import path

from catalog.rag import views

app_name = "rag"
urlpatterns = [
    path("", views.playground_page, name="playground"),
    path("quality/", views.quality_page, name="quality"),
    path("quality/run", views.quality_run_view, name="quality-run"),
]
