"""Who may open which console page: one registry, enforced by the views and checked by a test that
walks the URL conf (a new page without an entry here fails it)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _

from catalog.core import roles
from catalog.core.permissions import has_role

SIGNED_IN = "signed-in"
# Superusers hold no role implicitly (sign-off is a person's role), but an entry may admit them by listing
# SUPERUSER among its roles: the break-glass account must be able to manage service tokens.
SUPERUSER = "superuser"

# url name → (HTTP method the page answers, roles allowed; SIGNED_IN means every signed-in person)
PAGE_ACCESS: dict[str, tuple[str, frozenset[str] | str]] = {
    "home": ("GET", SIGNED_IN),
    "catalog": ("GET", SIGNED_IN),
    "catalog-export": ("GET", SIGNED_IN),
    "tool": ("GET", SIGNED_IN),
    "owners": ("GET", SIGNED_IN),
    "teams": ("GET", SIGNED_IN),
    "team": ("GET", SIGNED_IN),
    "findings": ("GET", SIGNED_IN),
    "revisions": ("GET", SIGNED_IN),
    "served-export": ("GET", SIGNED_IN),
    "revision": ("GET", SIGNED_IN),
    "language": ("POST", SIGNED_IN),
    "revision-review": ("POST", frozenset({roles.SAFETY_OFFICER})),
    "waiver-grant": ("POST", frozenset({roles.SAFETY_OFFICER})),
    "findings-waive": ("POST", frozenset({roles.SAFETY_OFFICER})),
    "waiver-revoke": ("POST", frozenset({roles.SAFETY_OFFICER})),
    # Tier floors: everyone reads what the gate applies; safety officers keep the table.
    "tier-floors": ("GET", SIGNED_IN),
    "tier-floor-add": ("POST", frozenset({roles.SAFETY_OFFICER})),
    "tier-floor-change": ("POST", frozenset({roles.SAFETY_OFFICER})),
    "tier-floor-remove": ("POST", frozenset({roles.SAFETY_OFFICER})),
    "tier-floor-confirm": ("POST", frozenset({roles.SAFETY_OFFICER})),
    "tier-floor-keep": ("POST", frozenset({roles.SAFETY_OFFICER})),
    # Card strings (catalog/cards): everyone reads; translators edit; a second person reviews.
    "cards:matrix": ("GET", SIGNED_IN),
    "cards:panel": ("GET", SIGNED_IN),
    "cards:coverage": ("GET", SIGNED_IN),
    "cards:export": ("GET", SIGNED_IN),
    "cards:save": ("POST", frozenset({roles.TRANSLATOR, roles.TRANSLATOR_REVIEWER})),
    "cards:review": ("POST", frozenset({roles.TRANSLATOR_REVIEWER})),
    # Tool-RAG: everyone may try a prompt and read the figures; running the case set is for those who act on them.
    "rag:playground": ("GET", SIGNED_IN),
    "rag:quality": ("GET", SIGNED_IN),
    "rag:quality-run": ("POST", frozenset({roles.CATALOG_ADMIN, roles.SAFETY_OFFICER})),
    # Runtime telemetry: everyone reads the names the runtime called that are no tool; on call and catalog admins
    # judge them (an alias to add to the source manifest, or noise to ignore).
    "usage:unknown": ("GET", SIGNED_IN),
    "usage:unknown-verdict": ("POST", frozenset({roles.ON_CALL, roles.CATALOG_ADMIN})),
    # Service API tokens: catalog admins (and superusers) issue, scope, expire and revoke them.
    "mcp-servers": ("GET", SIGNED_IN),
    "mcp-server": ("GET", SIGNED_IN),
    "mcp-governance": ("POST", frozenset({roles.CATALOG_ADMIN, SUPERUSER})),
    "mcp-reimport": ("POST", frozenset({roles.CATALOG_ADMIN, SUPERUSER})),
    "api-tokens": ("GET", frozenset({roles.CATALOG_ADMIN, SUPERUSER})),
    "api-token-create": ("POST", frozenset({roles.CATALOG_ADMIN, SUPERUSER})),
    "api-token-revoke": ("POST", frozenset({roles.CATALOG_ADMIN, SUPERUSER})),
}


def may(user: Any, allowed: frozenset[str] | str) -> bool:
    if allowed == SIGNED_IN:
        return bool(user.is_authenticated)
    if SUPERUSER in allowed and user.is_authenticated and user.is_superuser:
        return True
    return any(has_role(user, role) for role in allowed)


def page(
    name: str, registry: dict[str, tuple[str, frozenset[str] | str]] | None = None
) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """Sign-in required, then the roles the registry (this module's PAGE_ACCESS unless another app passes
    its own) gives `name`; others get a 403 that says who may."""
    _method, allowed = (PAGE_ACCESS if registry is None else registry)[name]

    def decorate(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not may(request.user, allowed):
                who = ", ".join(sorted(allowed)) if isinstance(allowed, frozenset) else allowed
                # Rendered by condor_admin.errors.forbidden: a page in the person's language (text for htmx).
                raise PermissionDenied(_("This page is for: %(roles)s.") % {"roles": who})
            return view(request, *args, **kwargs)

        return login_required(wrapped)

    return decorate
