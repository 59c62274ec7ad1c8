"""Bearer-token authentication for services, scoped per API area."""

from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer

from catalog.models import ApiToken

# last_used_at is for people ("is this token still used?"); minute resolution is plenty, and writing the
# same row on every call would serialise a busy runtime's requests on that row's lock.
LAST_USED_RESOLUTION = timedelta(seconds=60)


class ScopedBearer(HttpBearer):
    """Accepts a live token that carries `scope`; a valid token without it is a 403, not a 401."""

    def __init__(self, scope: str) -> None:
        super().__init__()
        self.scope = scope

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        api_token = token_by_hash(ApiToken.hash(token))
        now = timezone.now()
        if api_token is None or not api_token.is_usable(now):
            return None
        if self.scope not in api_token.scopes:
            raise HttpError(403, f"token {api_token.name!r} lacks the scope {self.scope!r}")
        if api_token.last_used_at is None or now - api_token.last_used_at >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=now)
        return api_token


def token_by_hash(token_hash: str) -> ApiToken | None:
    """The token with this hash (a unique index) and its owner: every API call's first query."""
    return ApiToken.objects.select_related("owner").filter(token_hash=token_hash).first()
