"""A signed-in person's chosen console language wins over the browser's Accept-Language."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation

from catalog.models import UserPreference

SESSION_KEY = "condor_language"


class UserLanguageMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            language = request.session.get(SESSION_KEY)
            if language is None:
                pref = UserPreference.objects.filter(user=user).values_list("language", flat=True).first()
                language = pref or ""
                request.session[SESSION_KEY] = language  # one query per session, not per request
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = language
        return self.get_response(request)
