"""The MCP server pages: the registered servers, one server's tools and overlay, re-import from the console."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from catalog.core.access import page
from catalog.core.permissions import may_manage_api_tokens
from catalog.models import McpServer
from catalog.selectors.mcp import mcp_server_page, mcp_servers_overview
from catalog.services.mcp_governance import GovernanceRefused, mcp_governance_update, mcp_reimport_request

RULES_MAX_CHARS = 100_000


class GovernanceForm(forms.Form):
    """The overlay: the server's owning team and default policy domain, then one rule per line."""

    team = forms.ChoiceField(label=gettext_lazy("Owning team"), required=False)
    policy_domain = forms.CharField(
        label=gettext_lazy("Default policy domain"),
        required=False,
        max_length=100,
        help_text=gettext_lazy("the approval domain of every tool no rule below gives one, e.g. referrals"),
    )
    rules = forms.CharField(
        label=gettext_lazy("Rules, one per line"),
        required=False,
        max_length=RULES_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "mono"}),
        help_text=gettext_lazy(
            "pattern [domain=…] [tier=high|low] [team=…]; the first pattern that matches a tool's name decides, "
            "e.g. send_* tier=high domain=referrals"
        ),
    )

    def __init__(self, *args: Any, teams: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].choices = [("", _("none (unowned)"))] + [(t, t) for t in teams]  # type: ignore[attr-defined]


def _render(request: HttpRequest, slug: str, form: GovernanceForm | None = None, status: int = 200) -> HttpResponse:
    try:
        data = mcp_server_page(slug)
    except McpServer.DoesNotExist as exc:
        raise Http404(f"no registered MCP server {slug!r}") from exc
    governance = data.server.governance or {}
    form = form or GovernanceForm(
        initial={
            "team": governance.get("team") or "",
            "policy_domain": governance.get("policyDomain") or "",
            "rules": data.rules_text,
        },
        teams=data.teams,
    )
    first_error = next((name for name in form.fields if name in form.errors), None)
    if first_error is not None:  # the person lands on what to fix, not at the top of the page
        form.fields[first_error].widget.attrs["autofocus"] = True
    context = {"page": data, "server": data.server, "form": form, "may_edit": may_manage_api_tokens(request.user)}
    return render(request, "catalog/mcp_server.html", context, status=status)


@page("mcp-servers")
def servers_page(request: HttpRequest) -> HttpResponse:
    return render(request, "catalog/mcp_servers.html", {"rows": mcp_servers_overview()})


@page("mcp-server")
def server_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _render(request, slug)


@require_POST
@page("mcp-governance")
def governance_view(request: HttpRequest, slug: str) -> HttpResponse:
    data_teams = mcp_server_page(slug).teams if McpServer.objects.filter(slug=slug).exists() else []
    form = GovernanceForm(request.POST, teams=data_teams)
    if not form.is_valid():
        return _render(request, slug, form, status=422)
    try:
        result = mcp_governance_update(
            server_id=slug,
            team=form.cleaned_data["team"],
            policy_domain=form.cleaned_data["policy_domain"],
            rules_text=form.cleaned_data["rules"],
            user=request.user,  # type: ignore[arg-type]
        )
    except GovernanceRefused as exc:
        for problem in exc.problems:
            field = "rules" if problem.startswith("line ") else None
            form.add_error(field, problem)
        return _render(request, slug, form, status=422)
    if result.unchanged:
        messages.info(request, _("Nothing changed: the overlay was already this."))
    else:
        messages.success(request, _("Saved as %(revision)s.") % {"revision": result.revision})
    return redirect("mcp-server", slug=slug)


@require_POST
@page("mcp-reimport")
def reimport_view(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        mcp_reimport_request(server_id=slug, user=request.user)  # type: ignore[arg-type]
    except GovernanceRefused as exc:
        messages.error(request, "; ".join(exc.problems))
        return redirect("mcp-server", slug=slug)
    messages.success(request, _("Re-import started: the result appears on this page."))
    return redirect("mcp-server", slug=slug)
