"""The hallucinated-names board (/usage/unknown/): every name the runtime called that is no catalog tool, with the
closest real tool and its owner; on-call engineers and catalog admins mark a name an alias of a tool (advice for
the source manifest), ignore it, or reopen it."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from catalog.core.access import page
from catalog.usage.selectors.names import VERDICT_FILTERS, unknown_names_board
from catalog.usage.services.names import TOOL_REF_MAX, VERDICTS, VerdictRefused, may_judge, unknown_name_verdict

_SHOW = [(k, k) for k in VERDICT_FILTERS]


class BoardFilter(forms.Form):
    show = forms.ChoiceField(choices=_SHOW, required=False)
    page = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)


class VerdictForm(forms.Form):
    name_id = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    verdict = forms.ChoiceField(choices=[(v, v) for v in VERDICTS])
    alias_of = forms.CharField(
        label=gettext_lazy("Should be an alias of"),
        max_length=TOOL_REF_MAX,
        required=False,
        help_text=gettext_lazy("system:id, or any spelling of one live tool"),
    )
    # Where to come back to: the board's filter and page.
    show = forms.ChoiceField(choices=_SHOW, required=False)
    page = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)


def _board_url(show: str, number: int | None) -> str:
    query = {"show": show} if show != "open" else {}
    if number and number > 1:
        query["page"] = str(number)
    return reverse("usage:unknown") + (f"?{urlencode(query)}" if query else "")


def _render(
    request: HttpRequest, show: str, number: int | None, *, bound: VerdictForm | None = None, status: int = 200
) -> HttpResponse:
    board = unknown_names_board(show, number or 1)
    context = {
        "board": board,
        "show": show,
        "filters": [(k, board.counts[k]) for k in VERDICT_FILTERS],
        "may_judge": may_judge(request.user),
        "bound": bound,
        "bound_id": bound.cleaned_data.get("name_id") if bound is not None else None,
    }
    return render(request, "usage/unknown.html", context, status=status)


@page("usage:unknown")
def unknown_page(request: HttpRequest) -> HttpResponse:
    form = BoardFilter(request.GET)
    data = form.cleaned_data if form.is_valid() else {}
    return _render(request, data.get("show") or "open", data.get("page"))


@require_POST
@page("usage:unknown-verdict")
def verdict_view(request: HttpRequest) -> HttpResponse:
    form = VerdictForm(request.POST)
    valid = form.is_valid()
    show, number = form.cleaned_data.get("show") or "open", form.cleaned_data.get("page")
    if not valid:
        return _render(request, show, number, bound=form, status=400)
    data = form.cleaned_data
    try:
        row = unknown_name_verdict(
            name_id=data["name_id"], verdict=data["verdict"], alias_of=data["alias_of"], by=request.user
        )
    except VerdictRefused as exc:
        if exc.forbidden:
            raise PermissionDenied(exc.message) from exc
        if exc.missing:
            raise Http404(exc.message) from exc
        for field, problem in exc.problems.items():
            form.add_error(field if field in form.fields else None, problem)
        return _render(request, show, number, bound=form, status=400)
    if row.verdict == "alias" and row.alias_of is not None:
        text = _("%(name)s marked as an alias of %(tool)s.") % {"name": row.name, "tool": row.alias_of.declared_id}
    elif row.verdict == "ignore":
        text = _("%(name)s ignored.") % {"name": row.name}
    else:
        text = _("%(name)s is open again.") % {"name": row.name}
    messages.success(request, text)
    return redirect(_board_url(show, number))
