"""Bearer-token authentication for services, scoped per API area."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer

from .models import ApiToken


class ScopedBearer(HttpBearer):
    """Accepts a live token that carries `scope`; a valid token without it is a 403, not a 401."""

    def __init__(self, scope: str) -> None:
        super().__init__()
        self.scope = scope

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        api_token = ApiToken.objects.filter(token_hash=ApiToken.hash(token)).first()
        now = timezone.now()
        if api_token is None or not api_token.is_usable(now):
            return None
        if self.scope not in api_token.scopes:
            raise HttpError(403, f"token {api_token.name!r} lacks the scope {self.scope!r}")
        ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=now)
        return api_token
