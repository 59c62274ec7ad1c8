"""Template helpers for API tokens: `user|may_manage_api_tokens` (the header link shows only to those the
page admits) and `last_used_at|used_ago`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import gettext as _

from catalog.core.auth import LAST_USED_RESOLUTION
from catalog.core.permissions import may_manage_api_tokens as _may_manage_api_tokens

register = template.Library()


@register.filter
def may_manage_api_tokens(user: Any) -> bool:
    # The group read is cached on the user for the request (catalog.core.permissions.has_role): no extra query.
    return _may_manage_api_tokens(user)


@register.filter
def used_ago(when: datetime) -> str:
    """E.g. "3 hours ago"; under a minute "within the last minute": the resolution ScopedBearer records."""
    if timezone.now() - when < LAST_USED_RESOLUTION:
        return _("within the last minute")
    return _("%(ago)s ago") % {"ago": timesince(when)}
