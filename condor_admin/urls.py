from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from catalog.core.signin import AdminSignInForm, SignInForm
from catalog.web.views import catalog, dashboard, floors, governance, language, mcp, owners, teams, tokens, tool
from condor_admin.api import api

# The admin signs in through the same throttled form as the console (catalog/core/signin.py).
admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("", dashboard.home, name="home"),
    path("catalog/", catalog.catalog_page, name="catalog"),
    path("catalog/export.<str:fmt>", catalog.catalog_export, name="catalog-export"),
    path("owners/", owners.owners_page, name="owners"),
    path("teams/", teams.teams_page, name="teams"),
    path("teams/<slug:slug>/", teams.team_page, name="team"),
    path("language", language.language_view, name="language"),
    path("findings/", governance.findings_page, name="findings"),
    path("findings/waive", governance.findings_waive_view, name="findings-waive"),
    path("revisions/", governance.revisions_page, name="revisions"),
    path("served/<slug:profile>.json", governance.served_export, name="served-export"),
    path("revisions/<str:system>/<int:number>/", governance.revision_page, name="revision"),
    path("revisions/<str:system>/<int:number>/review", governance.revision_review_view, name="revision-review"),
    path("tools/<str:system>/<path:declared_id>/", tool.tool_view, name="tool"),
    path("tools/<str:system>/<path:declared_id>/waivers", governance.waiver_grant_view, name="waiver-grant"),
    path("waivers/<int:pk>/revoke", governance.waiver_revoke_view, name="waiver-revoke"),
    path("floors/", floors.floors_page, name="tier-floors"),
    path("floors/new", floors.floor_add_view, name="tier-floor-add"),
    path("floors/<int:floor_id>/change", floors.floor_change_view, name="tier-floor-change"),
    path("floors/<int:floor_id>/remove", floors.floor_remove_view, name="tier-floor-remove"),
    path("floors/<int:floor_id>/confirm", floors.floor_confirm_view, name="tier-floor-confirm"),
    path("floors/<int:floor_id>/keep", floors.floor_keep_view, name="tier-floor-keep"),
    path("mcp/", mcp.servers_page, name="mcp-servers"),
    path("mcp/<str:slug>/", mcp.server_page, name="mcp-server"),
    path("mcp/<str:slug>/governance", mcp.governance_view, name="mcp-governance"),
    path("mcp/<str:slug>/reimport", mcp.reimport_view, name="mcp-reimport"),
    path("tokens/", tokens.tokens_page, name="api-tokens"),
    path("tokens/new", tokens.token_create_view, name="api-token-create"),
    path("tokens/<int:token_id>/revoke", tokens.token_revoke_view, name="api-token-revoke"),
    path("approvals/", include("approvals.urls")),
    path("cards/", include("catalog.cards.urls")),
    path("rag/", include("catalog.rag.urls")),
    path("usage/", include("catalog.usage.urls")),
    path("login/", auth_views.LoginView.as_view(authentication_form=SignInForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
]

handler403 = "condor_admin.errors.forbidden"
handler404 = "condor_admin.errors.not_found"
handler500 = "condor_admin.errors.server_error"
