"""Role checks. Roles are Django groups (created by migration); see catalog/core/roles.py."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group

from catalog.core import roles


def has_role(user: Any, role: str) -> bool:
    """Membership of the role's group. Superusers are not implicitly safety officers: sign-off is a role."""
    if not getattr(user, "is_authenticated", False):
        return False
    cache = getattr(user, "_condor_groups", None)
    if cache is None:
        cache = set(Group.objects.filter(user=user.pk).values_list("name", flat=True))
        user._condor_groups = cache
    return role in cache


def is_safety_officer(user: Any) -> bool:
    return has_role(user, roles.SAFETY_OFFICER)


def may_manage_api_tokens(user: Any) -> bool:
    """Catalog admins issue and revoke service tokens; so may superusers (the break-glass account)."""
    return bool(getattr(user, "is_superuser", False)) or has_role(user, roles.CATALOG_ADMIN)
