"""The console's language: a person's choice, kept for them and for this session."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from catalog.core.access import page
from catalog.models import UserPreference
from catalog.web.forms import LanguageForm
from catalog.web.middleware import SESSION_KEY


@require_POST
@page("language")
def language_view(request: HttpRequest) -> HttpResponse:
    form = LanguageForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("language: choose one of the console's languages")
    language = form.cleaned_data["language"]
    UserPreference.objects.update_or_create(user=request.user, defaults={"language": language})
    request.session[SESSION_KEY] = language
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"  # never send a person on to another site
    return redirect(target)
