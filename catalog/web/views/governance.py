"""The safety officer's pages: findings, revisions and sign-off, a tool's findings and waivers."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST
from ninja.errors import HttpError

from catalog.api.policy import served_answer
from catalog.core.access import page
from catalog.core.http import HtmxHttpRequest
from catalog.core.permissions import is_safety_officer
from catalog.domain.rules import RULES
from catalog.domain.vocabulary import ReviewState
from catalog.models import CatalogRevision, RevisionReview, Tool, Waiver
from catalog.selectors.catalog import catalog_systems
from catalog.selectors.governance import FINDINGS_LISTED_MAX, finding_groups, revisions_list
from catalog.selectors.officers import safety_officer_role_changes, safety_officers
from catalog.selectors.served import clinical_profile_slugs, signed_off
from catalog.selectors.signoff import decision_state, revision_detail
from catalog.services.governance import (
    BULK_WAIVE_MAX,
    GovernanceRefused,
    waiver_grant,
    waiver_revoke,
    waivers_grant_for_findings,
)
from catalog.services.signoff import SignoffResult, revision_review
from catalog.web.forms import BulkWaiverForm, FindingFilterForm, ReviewForm, WaiverForm, focus_first_error
from catalog.web.views.tool import tool_response

PAGE_SIZE = 50


def _finding_filters(form: FindingFilterForm) -> dict[str, Any]:
    if not (form.is_bound and form.is_valid()):
        return {}
    data = form.cleaned_data
    filters: dict[str, Any] = {k: data[k] or None for k in ("rule", "severity", "system", "owner")}
    filters["waived"] = form.waived_value()
    return filters


def _findings_response(
    request: HtmxHttpRequest, waive_form: BulkWaiverForm | None = None, status: int = 200
) -> HttpResponse:
    """The findings page, one group per (rule, severity). A filter that does not validate shows every finding, its
    error beside its field (status 400); a refused bulk waiver shows the page as submitted (the ticks and the
    typed reason kept), its error beside its field."""
    form = FindingFilterForm(request.GET or None, systems=catalog_systems())
    filters = _finding_filters(form)
    if form.is_bound and form.errors:
        status = 200 if request.htmx else 400  # htmx swaps only a 2xx
        focus_first_error(form)
    may_waive = is_safety_officer(request.user)
    if waive_form is None:
        waive_form = BulkWaiverForm()
    else:
        focus_first_error(waive_form)
    checked = {str(v) for v in request.POST.getlist("findings")}  # the ticks of a refused bulk waiver, kept
    groups = finding_groups(**filters)
    context = {
        "form": form,
        "groups": groups,
        "total": sum(g.count for g in groups),
        "query": request.GET.urlencode(),
        "may_waive": may_waive and any(g.waivable for g in groups),
        "waive_form": waive_form,
        "checked": checked,
        "waive_max": BULK_WAIVE_MAX,
        "findings_cap": FINDINGS_LISTED_MAX,
    }
    template = "catalog/findings.html#results" if request.htmx else "catalog/findings.html"
    return render(request, template, context, status=status)


@page("findings")
def findings_page(request: HtmxHttpRequest) -> HttpResponse:
    return _findings_response(request)


@require_POST
@page("findings-waive")
def findings_waive_view(request: HtmxHttpRequest) -> HttpResponse:
    """Waive the ticked findings with one justification and one expiry, all or none."""
    form = BulkWaiverForm(request.POST)
    if not form.is_valid():
        return _findings_response(request, form, status=400)
    try:
        waivers = waivers_grant_for_findings(
            finding_ids=form.cleaned_data["findings"],
            justification=form.cleaned_data["justification"],
            expires_at=form.expires_at(),
            granted_by=request.user,
        )
    except GovernanceRefused as exc:
        _refusal_beside_its_field(form, exc)
        return _findings_response(request, form, status=400)
    messages.success(
        request,
        ngettext("%(n)s waiver granted.", "%(n)s waivers granted.", len(waivers)) % {"n": len(waivers)},
    )
    # Back to the page as it was filtered (the form posts to this URL with the page's own query string).
    query = request.GET.urlencode()
    return redirect(reverse("findings") + (f"?{query}" if query else ""))


# The service's name for an input → the form's field (the service speaks of instants, the form of days).
_FORM_FIELD = {"expires_at": "expires_on"}


def _refusal_beside_its_field(form: Any, exc: GovernanceRefused) -> None:
    """A waiver the service refused: a person who may not waive gets the styled 403 (condor_admin.errors); any
    other refusal goes beside the field it names, for the page to render again with the input kept."""
    if exc.forbidden:
        raise PermissionDenied(exc.reason)
    form.add_error(_FORM_FIELD.get(exc.field or "", exc.field), exc.reason)


@page("revisions")
def revisions_page(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("state") or None
    if state and state not in {s.value for s in ReviewState}:
        state = None
    page = Paginator(revisions_list(state=state), PAGE_SIZE).get_page(request.GET.get("page"))
    context: dict[str, Any] = {"page": page, "state": state, "states": list(ReviewState)}
    context.update(signed=signed_off(), clinical_profiles=clinical_profile_slugs())
    if is_safety_officer(request.user):
        context.update(officers=safety_officers(), role_changes=safety_officer_role_changes())
    return render(request, "catalog/revisions.html", context)


@page("served-export")
def served_export(request: HttpRequest, profile: str) -> HttpResponse:
    """What `profile` is served now, every live tool, and since which sign-off: the effective-policy API's answer
    (GET /api/v1/catalog/policy), downloaded from the console."""
    try:
        response = served_answer(request, profile)
    except HttpError as exc:
        raise Http404(str(exc)) from exc
    if response.status_code == 200:
        stamp = timezone.now().strftime("%Y%m%d-%H%M")
        response["Content-Disposition"] = f'attachment; filename="condor-served-{profile}-{stamp}.json"'
    return response


def _revision_response(
    request: HttpRequest, system: str, number: int, form: ReviewForm | None = None, status: int = 200
) -> HttpResponse:
    try:
        data = revision_detail(system, number)
    except CatalogRevision.DoesNotExist as exc:
        raise Http404(f"no revision {number} of {system}") from exc
    if form is not None:
        focus_first_error(form)
    context = {
        "page": data,
        "revision": data.revision,
        "decision": decision_state(data, request.user),
        "form": form or ReviewForm(),
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
        return _revision_response(request, system, number, form, status=400)
    try:
        result = revision_review(
            revision_id=revision.pk,
            reviewer=request.user,
            decision=form.cleaned_data["decision"],
            comment=form.cleaned_data["comment"],
        )
    except GovernanceRefused as exc:
        if exc.forbidden:
            # The page itself, refusal on top: the reviewer sees why and what is still open to them.
            messages.error(request, exc.reason)
            return _revision_response(request, system, number, status=403)
        # Beside its field, or (a decision the revision's state refuses) on top of the form, the comment kept.
        form.add_error(exc.field if exc.field in form.fields else None, exc.reason)
        return _revision_response(request, system, number, form, status=409 if exc.field is None else 400)
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
    # Every rule parses, so a never-waivable one reaches the service and the officer reads why, beside the field.
    form = WaiverForm(request.POST, rules=sorted(RULES))
    if not form.is_valid():
        return tool_response(request, system, declared_id, form, status=400)
    try:
        waiver_grant(
            tool_id=tool.pk,
            rule=form.cleaned_data["rule"],
            justification=form.cleaned_data["justification"],
            expires_at=form.expires_at(),
            granted_by=request.user,
        )
    except GovernanceRefused as exc:
        _refusal_beside_its_field(form, exc)
        return tool_response(request, system, declared_id, form, status=400)
    messages.success(
        request, _("%(rule)s waived for %(tool)s") % {"rule": form.cleaned_data["rule"], "tool": tool.declared_id}
    )
    return redirect("tool", system=system, declared_id=declared_id)


@require_POST
@page("waiver-revoke")
def waiver_revoke_view(request: HttpRequest, pk: int) -> HttpResponse:
    waiver = get_object_or_404(Waiver.objects.select_related("tool"), pk=pk)
    try:
        waiver_revoke(waiver_id=waiver.pk, revoked_by=request.user)
    except GovernanceRefused as exc:
        if exc.forbidden:
            raise PermissionDenied(exc.message) from exc
        messages.error(request, exc.reason)
    return redirect("tool", system=waiver.tool.system, declared_id=waiver.tool.declared_id)
