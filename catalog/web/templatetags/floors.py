"""Template helper for the tier floors link: `user|is_safety_officer` (the header shows the link to those who keep
the floors)."""

from __future__ import annotations

from typing import Any

from django import template

from catalog.core.permissions import is_safety_officer as _is_safety_officer

register = template.Library()


@register.filter
def is_safety_officer(user: Any) -> bool:
    # The group read is cached on the user for the request (catalog.core.permissions.has_role): no extra query.
    return _is_safety_officer(user)
