"""The tier floors page: every floor with the tools it catches; safety officers add, change and remove floors."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from catalog.core.access import page
from catalog.core.permissions import is_safety_officer
from catalog.domain.floors import (
    DOMAIN_MAX,
    LOWER,
    PATTERN_MAX,
    REASON_MAX,
    TIERS,
    floor_problems,
    normalized_domain,
    normalized_pattern,
)
from catalog.domain.vocabulary import HitlTier
from catalog.models import TierFloor
from catalog.selectors.catalog import catalog_systems
from catalog.selectors.floors import floors_overview
from catalog.services.floors import (
    FloorRefused,
    tier_floor_add,
    tier_floor_change,
    tier_floor_confirm,
    tier_floor_keep,
    tier_floor_remove,
)

_TIER_CHOICES = [(t, t) for t in reversed(TIERS)]  # high first: what the seed reserves


def _reason_field(help_text: Any) -> forms.CharField:
    return forms.CharField(
        label=gettext_lazy("Reason"),
        max_length=REASON_MAX,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=help_text,
    )


def _system_choices() -> list[tuple[str, Any]]:
    """Read when a form is made: condor, tucan and every MCP server's catalog."""
    return [("", gettext_lazy("every system"))] + [(s, s) for s in catalog_systems()]


class FloorAddForm(forms.Form):
    """A new floor. The pure checks (catalog.domain.floors) run here too, so each problem shows beside its field."""

    policy_domain = forms.CharField(
        label=gettext_lazy("Policy domain"),
        required=False,
        max_length=DOMAIN_MAX,
        help_text=gettext_lazy("exact, e.g. medication (TUCAN tools: their category)"),
    )
    pattern = forms.CharField(
        label=gettext_lazy("or tool-id pattern"),
        required=False,
        max_length=PATTERN_MAX,
        help_text=gettext_lazy("e.g. *prescri*: matched against the declared id, LLM name and canonical key"),
    )
    system = forms.ChoiceField(
        label=gettext_lazy("System"),
        required=False,
        choices=_system_choices,
    )
    min_tier = forms.ChoiceField(
        label=gettext_lazy("Minimum HITL tier"),
        choices=_TIER_CHOICES,
        initial=HitlTier.HIGH.value,
        widget=forms.RadioSelect,
    )
    reason = _reason_field(gettext_lazy("why tools that match need at least this tier"))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        data["policy_domain"] = normalized_domain(data.get("policy_domain", ""))
        data["pattern"] = normalized_pattern(data.get("pattern", ""))
        found = floor_problems(
            policy_domain=data["policy_domain"],
            pattern=data["pattern"],
            system=data.get("system", ""),
            min_tier=data.get("min_tier", HitlTier.HIGH.value),
            reason=data.get("reason", "-"),
        )
        for field, problem in found.items():
            if field not in self.errors:  # a field's own error (required, too long) says it first
                self.add_error(field, problem)
        return data


class FloorChangeForm(forms.Form):
    min_tier = forms.ChoiceField(
        label=gettext_lazy("Minimum HITL tier"), choices=_TIER_CHOICES, widget=forms.RadioSelect
    )
    reason = _reason_field(gettext_lazy("why tools that match need at least this tier"))


class FloorRemoveForm(forms.Form):
    reason = _reason_field(gettext_lazy("why the tools it catches no longer need this tier"))


def _ids(kind: str, pk: int) -> str:
    """Each floor's forms get ids of their own: the page holds one change and one remove form per floor."""
    return f"{kind}-{pk}-%s"


def _render(
    request: HttpRequest,
    *,
    add: FloorAddForm | None = None,
    bound: tuple[int, forms.Form] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The page; `bound` is the change or remove form of one floor that came back with errors (shown open)."""
    rows = floors_overview()
    shown = request.GET.get("floor", "")
    forms_of = {
        r.floor.pk: {
            "change": FloorChangeForm(
                initial={"min_tier": r.floor.min_tier, "reason": r.floor.reason}, auto_id=_ids("change", r.floor.pk)
            ),
            "remove": FloorRemoveForm(auto_id=_ids("remove", r.floor.pk)),
        }
        for r in rows
    }
    if bound is not None and bound[0] in forms_of:
        kind = "change" if isinstance(bound[1], FloorChangeForm) else "remove"
        forms_of[bound[0]][kind] = bound[1]
    context = {
        "rows": [(r, forms_of[r.floor.pk]) for r in rows],
        "shown": next((r for r in rows if str(r.floor.pk) == shown), None),
        "add": add or FloorAddForm(),
        "may_edit": is_safety_officer(request.user),
        "open_pk": bound[0] if bound is not None else None,
    }
    return render(request, "catalog/floors.html", context, status=status)


@page("tier-floors")
def floors_page(request: HttpRequest) -> HttpResponse:
    return _render(request)


def _problems_to(form: forms.Form, exc: FloorRefused) -> None:
    """A refusal's problems beside their fields (the rest above the form)."""
    for field, problem in exc.problems.items():
        form.add_error(field if field in form.fields else None, problem)


@require_POST
@page("tier-floor-add")
def floor_add_view(request: HttpRequest) -> HttpResponse:
    form = FloorAddForm(request.POST)
    if form.is_valid():
        try:
            floor = tier_floor_add(**form.cleaned_data, created_by=request.user)
        except FloorRefused as exc:
            if exc.forbidden:
                raise PermissionDenied(exc.message) from exc
            _problems_to(form, exc)
            return _render(request, add=form, status=400)
        messages.success(request, _("Tier floor %(floor)s added.") % {"floor": floor.key})
        return redirect(reverse("tier-floors") + f"?floor={floor.pk}#caught")
    return _render(request, add=form, status=400)


def _floor(pk: int) -> TierFloor:
    floor = TierFloor.objects.filter(pk=pk).first()
    if floor is None:
        raise Http404(f"no tier floor {pk}: it may have been removed meanwhile")
    return floor


@require_POST
@page("tier-floor-change")
def floor_change_view(request: HttpRequest, floor_id: int) -> HttpResponse:
    floor = _floor(floor_id)
    form = FloorChangeForm(request.POST, auto_id=_ids("change", floor.pk))
    if form.is_valid():
        try:
            changed = tier_floor_change(floor_id=floor.pk, **form.cleaned_data, changed_by=request.user)
        except FloorRefused as exc:
            if exc.forbidden:
                raise PermissionDenied(exc.message) from exc
            _problems_to(form, exc)
            return _render(request, bound=(floor.pk, form), status=400)
        if changed.proposal == LOWER:
            messages.success(request, _PROPOSED_LOWER % {"floor": floor.key, "tier": changed.proposed_tier})
        else:
            messages.success(request, _("Tier floor %(floor)s changed.") % {"floor": floor.key})
        return redirect(reverse("tier-floors") + f"?floor={floor.pk}#caught")
    return _render(request, bound=(floor.pk, form), status=400)


@require_POST
@page("tier-floor-remove")
def floor_remove_view(request: HttpRequest, floor_id: int) -> HttpResponse:
    floor = _floor(floor_id)
    form = FloorRemoveForm(request.POST, auto_id=_ids("remove", floor.pk))
    if form.is_valid():
        try:
            tier_floor_remove(floor_id=floor.pk, reason=form.cleaned_data["reason"], removed_by=request.user)
        except FloorRefused as exc:
            if exc.forbidden:
                raise PermissionDenied(exc.message) from exc
            _problems_to(form, exc)
            return _render(request, bound=(floor.pk, form), status=400)
        messages.success(request, _PROPOSED_REMOVAL % {"floor": floor.key})
        return redirect(reverse("tier-floors") + f"#floor-{floor.pk}")
    return _render(request, bound=(floor.pk, form), status=400)


_PROPOSED_LOWER = gettext_lazy(
    "Lowering %(floor)s to %(tier)s proposed: it holds until a second safety officer confirms it."
)
_PROPOSED_REMOVAL = gettext_lazy("Removal of %(floor)s proposed: it holds until a second safety officer confirms it.")


def _decided(request: HttpRequest, floor_id: int, decide: Any) -> HttpResponse:
    """Confirm or keep a proposal; a refusal (decided meanwhile, or the proposer confirming) is a message."""
    floor = _floor(floor_id)
    try:
        text = decide(floor)
    except FloorRefused as exc:
        messages.error(request, exc.message)
        return redirect(reverse("tier-floors") + f"#floor-{floor.pk}")
    messages.success(request, text)
    return redirect(
        reverse("tier-floors") + (f"#floor-{floor.pk}" if TierFloor.objects.filter(pk=floor.pk).exists() else "")
    )


@require_POST
@page("tier-floor-confirm")
def floor_confirm_view(request: HttpRequest, floor_id: int) -> HttpResponse:
    def confirm(floor: TierFloor) -> str:
        key, what = tier_floor_confirm(floor_id=floor.pk, confirmed_by=request.user)
        if what == LOWER:
            return _("Tier floor %(floor)s lowered: the gate applies it from the next call.") % {"floor": key}
        return _("Tier floor %(floor)s removed: the gate no longer applies it.") % {"floor": key}

    return _decided(request, floor_id, confirm)


@require_POST
@page("tier-floor-keep")
def floor_keep_view(request: HttpRequest, floor_id: int) -> HttpResponse:
    def keep(floor: TierFloor) -> str:
        kept = tier_floor_keep(floor_id=floor.pk, kept_by=request.user)
        return _("Tier floor %(floor)s kept as it is.") % {"floor": kept.key}

    return _decided(request, floor_id, keep)
