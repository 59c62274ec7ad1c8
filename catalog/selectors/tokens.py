"""Reads of the service API tokens (the tokens page)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import (
    Case,
    CharField,
    IntegerField,
    Q,
    QuerySet,
    Value,
    When,
)

from catalog.models import ApiToken


def api_tokens_list(*, now: datetime) -> QuerySet[ApiToken]:
    """Every service token with its `state` (active, expired, owner-inactive, revoked): live ones first, then by name.

    The state is ApiToken.is_usable's rule, which ScopedBearer applies (revoked wins over expired), so
    the console shows exactly what the API will do with the token at `now`. One query.
    """
    revoked, expired = Q(revoked_at__isnull=False), Q(expires_at__lte=now)
    owner_inactive = Q(owner__isnull=False, owner__is_active=False)
    return ApiToken.objects.annotate(
        state=Case(
            When(revoked, then=Value("revoked")),
            When(owner_inactive, then=Value("owner-inactive")),
            When(expired, then=Value("expired")),
            default=Value("active"),
            output_field=CharField(),
        ),
        state_rank=Case(
            When(revoked, then=Value(3)),
            When(owner_inactive, then=Value(2)),
            When(expired, then=Value(1)),
            default=Value(0),
            output_field=IntegerField(),
        ),
    ).order_by("state_rank", "name")
