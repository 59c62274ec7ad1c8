"""The approvals API's bearer authentication: catalog's ScopedBearer, minus a write on every call."""

from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError

from catalog.auth import ScopedBearer
from catalog.models import ApiToken

# last_used_at is for people ("is this token still used?"); minute resolution is plenty.
LAST_USED_RESOLUTION = timedelta(seconds=60)


class ApprovalsBearer(ScopedBearer):
    """Same rules as ScopedBearer (live token, 403 without the scope), but last_used_at is written at most
    once a minute per token. The runtime calls this API hundreds of times a second with one token;
    writing the same row on every call would serialise all of them on that row's lock."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        api_token = ApiToken.objects.filter(token_hash=ApiToken.hash(token)).first()
        now = timezone.now()
        if api_token is None or not api_token.is_usable(now):
            return None
        if self.scope not in api_token.scopes:
            raise HttpError(403, f"token {api_token.name!r} lacks the scope {self.scope!r}")
        if api_token.last_used_at is None or now - api_token.last_used_at >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=now)
        return api_token
