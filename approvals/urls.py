from __future__ import annotations

from django.urls import path

from approvals import views

app_name = "approvals"

urlpatterns = [
    path("", views.queue_page, name="queue"),
    path("history/", views.history_page, name="history"),
    path("counts", views.counts_partial, name="counts"),
    path("bulk-approve", views.bulk_approve_view, name="bulk-approve"),
    path("<uuid:request_id>/", views.request_page, name="detail"),
    path("<uuid:request_id>/decide", views.decide_view, name="decide"),
]
