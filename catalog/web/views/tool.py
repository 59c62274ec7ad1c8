"""One tool's page: declared beside effective axes, what clinical profiles are served while a newer declaration
awaits sign-off, its findings and waivers."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from catalog.core.access import page
from catalog.core.permissions import is_safety_officer
from catalog.domain.rules import RULES
from catalog.models import Tool
from catalog.selectors.governance import findings_list
from catalog.selectors.signoff import tool_in_effect
from catalog.selectors.tool import tool_page
from catalog.usage.selectors.health import tool_health
from catalog.web.forms import WaiverForm, choice_field, focus_first_error


def tool_response(
    request: HttpRequest, system: str, declared_id: str, form: WaiverForm | None = None, status: int = 200
) -> HttpResponse:
    """The tool page; with a refused waiver `form`, that form as typed, its errors beside their fields."""
    try:
        data = tool_page(system, declared_id)
    except Tool.DoesNotExist as exc:
        raise Http404(f"no tool {declared_id!r} in {system}") from exc
    findings = list(findings_list(tool_id=data.tool.pk))
    waivable = sorted({f.rule for f in findings if RULES[f.rule].waivable and f.waived_until is None})
    officer = is_safety_officer(request.user)
    if form is None:
        form = WaiverForm(rules=waivable)
    else:  # offer what may be waived now, the typed choice kept when it still is
        choice_field(form, "rule").choices = [(r, r) for r in waivable]
        focus_first_error(form)
    return render(
        request,
        "catalog/tool.html",
        {
            "page": data,
            "tool": data.tool,
            "findings": findings,
            "waivers": data.tool.waivers.select_related("granted_by", "revoked_by").order_by("-created_at"),
            "now": timezone.now(),
            "may_waive": officer and bool(waivable),
            "may_revoke": officer,
            "form": form,
            "in_effect": tool_in_effect(data.tool),
            "health": tool_health(data.tool.pk),
        },
        status=status,
    )


@page("tool")
def tool_view(request: HttpRequest, system: str, declared_id: str) -> HttpResponse:
    return tool_response(request, system, declared_id)
