"""The catalog admin's service tokens: list, issue (the token is shown once), revoke."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from catalog.core.access import page
from catalog.core.http import HtmxHttpRequest
from catalog.core.tokens import (
    DEFAULT_EXPIRY_DAYS,
    IssuedToken,
    TokenRefused,
    api_token_create,
    api_token_revoke,
    token_max_days,
)
from catalog.models import ApiToken
from catalog.selectors.tokens import api_tokens_list

PAGE_SIZE = 50


class ApiTokenForm(forms.Form):
    """Parses the input; what makes a token valid (required, unique, in range) the service decides and
    reports all at once, so nothing here is required."""

    name = forms.CharField(label=gettext_lazy("Name"), required=False, max_length=100)
    scopes = forms.MultipleChoiceField(
        label=gettext_lazy("Scopes"),
        required=False,
        choices=[(s, s) for s in ApiToken.SCOPES],
        widget=forms.CheckboxSelectMultiple,
    )
    expires_on = forms.DateField(
        label=gettext_lazy("Expires on"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        today = timezone.localdate()
        self.fields["name"].help_text = gettext_lazy("the service that will use it, e.g. runtime-prod")
        self.fields["expires_on"].initial = (today + timedelta(days=DEFAULT_EXPIRY_DAYS)).isoformat()
        self.fields["expires_on"].help_text = _("at most %(days)s days ahead") % {"days": token_max_days()}
        self.fields["expires_on"].widget.attrs.update(
            min=today.isoformat(), max=(today + timedelta(days=token_max_days())).isoformat()
        )

    def expires_at(self) -> datetime | None:
        # A token runs to the end of the chosen day in the console's time zone, like a waiver.
        day = self.cleaned_data["expires_on"]
        return timezone.make_aware(datetime.combine(day, time(23, 59, 59))) if day else None


def _render(request: HtmxHttpRequest, form: ApiTokenForm, issued: IssuedToken | None = None) -> HttpResponse:
    tokens = Paginator(api_tokens_list(now=timezone.now()), PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"form": form, "tokens": tokens, "issued": issued}
    template = "catalog/tokens.html#panel" if request.htmx else "catalog/tokens.html"
    return render(request, template, context)


@never_cache
@page("api-tokens")
def tokens_page(request: HtmxHttpRequest) -> HttpResponse:
    return _render(request, ApiTokenForm())


@never_cache  # the response carries the raw token: no cache, proxy or back button may keep it
@require_POST
@page("api-token-create")
def token_create_view(request: HtmxHttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return _render(request, form)
    try:
        issued = api_token_create(
            name=form.cleaned_data["name"],
            scopes=form.cleaned_data["scopes"],
            expires_at=form.expires_at(),
            created_by=request.user,
        )
    except TokenRefused as exc:
        if exc.forbidden:
            raise PermissionDenied(exc.message) from exc
        for field, message in exc.problems.items():
            form.add_error(field, message)
        return _render(request, form)
    # Rendered, not redirected: the raw token exists only in this response (no session, no message store).
    return _render(request, ApiTokenForm(), issued)


@require_POST
@page("api-token-revoke")
def token_revoke_view(request: HtmxHttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=token_id)
    try:
        api_token_revoke(token_id=token.pk, revoked_by=request.user)
    except TokenRefused as exc:
        if exc.forbidden:
            raise PermissionDenied(exc.message) from exc
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Token “%(name)s” revoked: its next API call gets a 401.") % {"name": token.name})
    return redirect("api-tokens")
