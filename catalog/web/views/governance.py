"""The safety officer's pages: findings, revisions and sign-off, a tool's findings and waivers."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from catalog.core.access import page
from catalog.domain.rules import RULES
from catalog.domain.vocabulary import ReviewState
from catalog.models import CatalogRevision, RevisionReview, Tool, Waiver
from catalog.selectors.catalog import catalog_systems
from catalog.selectors.governance import finding_counts_per_rule, findings_list, revisions_list
from catalog.selectors.signoff import decision_state, revision_detail
from catalog.services.governance import GovernanceRefused, waiver_grant, waiver_revoke
from catalog.services.signoff import SignoffResult, revision_review
from catalog.web.forms import FindingFilterForm, ReviewForm, WaiverForm

PAGE_SIZE = 50


@page("findings")
def findings_page(request: HttpRequest) -> HttpResponse:
    form = FindingFilterForm(request.GET or None, systems=catalog_systems())
    filters: dict[str, Any] = {}
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        filters = {k: data[k] or None for k in ("rule", "severity", "system", "owner")}
        filters["waived"] = form.waived_value()
    page = Paginator(findings_list(**filters), PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "counts": finding_counts_per_rule(system=filters.get("system")),
        "rules": RULES,
    }
    template = "catalog/findings.html#results" if request.htmx else "catalog/findings.html"  # type: ignore[attr-defined]
    return render(request, template, context)


@page("revisions")
def revisions_page(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("state") or None
    if state and state not in {s.value for s in ReviewState}:
        state = None
    page = Paginator(revisions_list(state=state), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "catalog/revisions.html", {"page": page, "state": state, "states": list(ReviewState)})


def _revision_response(request: HttpRequest, system: str, number: int, status: int = 200) -> HttpResponse:
    try:
        data = revision_detail(system, number)
    except CatalogRevision.DoesNotExist as exc:
        raise Http404(f"no revision {number} of {system}") from exc
    context = {
        "page": data,
        "revision": data.revision,
        "decision": decision_state(data, request.user),
        "form": ReviewForm(),
    }
    return render(request, "catalog/revision.html", context, status=status)


@page("revision")
def revision_page(request: HttpRequest, system: str, number: int) -> HttpResponse:
    return _revision_response(request, system, number)


def _decided_message(result: SignoffResult) -> str:
    revision = result.revision
    if result.review.decision == RevisionReview.Decision.REQUEST_CHANGES:
        return _("Changes requested on %(revision)s: what is in effect stays as it is.") % {"revision": revision}
    if result.in_effect:
        return _("%(revision)s is approved: %(count)s awaiting declarations are now in effect.") % {
            "revision": revision,
            "count": result.applied,
        }
    return _("Your approval of %(revision)s is recorded: %(approvals)s of %(required)s sign-offs.") % {
        "revision": revision,
        "approvals": result.approvals,
        "required": result.required,
    }


@require_POST
@page("revision-review")
def revision_review_view(request: HttpRequest, system: str, number: int) -> HttpResponse:
    revision = get_object_or_404(CatalogRevision, system=system, number=number)
    form = ReviewForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items()))
        return redirect("revision", system=system, number=number)
    try:
        result = revision_review(
            revision_id=revision.pk,
            reviewer=request.user,
            decision=form.cleaned_data["decision"],
            comment=form.cleaned_data["comment"],
        )
    except GovernanceRefused as exc:
        messages.error(request, exc.message)
        if exc.forbidden:
            # The page itself, refusal on top: the reviewer sees why and what is still open to them.
            return _revision_response(request, system, number, status=403)
    else:
        messages.success(request, _decided_message(result))
    return redirect("revision", system=system, number=number)


def _tool(system: str, declared_id: str) -> Tool:
    return get_object_or_404(
        Tool.objects.select_related("owner", "owner_rule", "safety_revision"), system=system, declared_id=declared_id
    )


@require_POST
@page("waiver-grant")
def waiver_grant_view(request: HttpRequest, system: str, declared_id: str) -> HttpResponse:
    tool = _tool(system, declared_id)
    form = WaiverForm(request.POST, rules=sorted(RULES))
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items()))
        return redirect("tool", system=system, declared_id=declared_id)
    # A waiver runs to the end of the chosen day, in the console's time zone.
    expires = timezone.make_aware(datetime.combine(form.cleaned_data["expires_on"], time(23, 59, 59)))
    try:
        waiver_grant(
            tool_id=tool.pk,
            rule=form.cleaned_data["rule"],
            justification=form.cleaned_data["justification"],
            expires_at=expires,
            granted_by=request.user,
        )
    except GovernanceRefused as exc:
        if exc.forbidden:
            return HttpResponseForbidden(exc.message)
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{form.cleaned_data['rule']} waived for {tool.declared_id}")
    return redirect("tool", system=system, declared_id=declared_id)


@require_POST
@page("waiver-revoke")
def waiver_revoke_view(request: HttpRequest, pk: int) -> HttpResponse:
    waiver = get_object_or_404(Waiver.objects.select_related("tool"), pk=pk)
    try:
        waiver_revoke(waiver_id=waiver.pk, revoked_by=request.user)
    except GovernanceRefused as exc:
        if exc.forbidden:
            return HttpResponseForbidden(exc.message)
        messages.error(request, exc.message)
    return redirect("tool", system=waiver.tool.system, declared_id=waiver.tool.declared_id)
