from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from catalog import views as catalog_views
from catalog.views import governance

from .api import api

urlpatterns = [
    path("", catalog_views.home, name="home"),
    path("findings/", governance.findings_page, name="findings"),
    path("revisions/", governance.revisions_page, name="revisions"),
    path("revisions/<str:system>/<int:number>/", governance.revision_page, name="revision"),
    path("revisions/<str:system>/<int:number>/review", governance.revision_review_view, name="revision-review"),
    path("tools/<str:system>/<path:declared_id>/findings/", governance.tool_findings_page, name="tool-findings"),
    path("tools/<str:system>/<path:declared_id>/waivers", governance.waiver_grant_view, name="waiver-grant"),
    path("waivers/<int:pk>/revoke", governance.waiver_revoke_view, name="waiver-revoke"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
]
