"""Who may open which approvals page (the console's PAGE_ACCESS convention, see catalog/access.py).

Pages list what the person may see; each request is then checked on its own (its domain, four-eyes):
a stranger to a request's domain gets a 404, not a hint that it exists.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden

from catalog import roles
from catalog.access import SIGNED_IN, may

DECIDERS = frozenset({roles.APPROVER, settings.APPROVALS_ESCALATION_GROUP})
READERS = DECIDERS | {roles.SAFETY_OFFICER}

# url name → (HTTP method the page answers, roles allowed; SIGNED_IN means every signed-in person)
PAGE_ACCESS: dict[str, tuple[str, frozenset[str] | str]] = {
    # Everyone signed in gets an answer: the queue, history and counts show what is theirs (often nothing).
    "approvals:queue": ("GET", SIGNED_IN),
    "approvals:history": ("GET", SIGNED_IN),
    "approvals:counts": ("GET", SIGNED_IN),
    "approvals:detail": ("GET", READERS),
    "approvals:decide": ("POST", DECIDERS),
    "approvals:bulk-approve": ("POST", DECIDERS),
}


def page(name: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Sign-in required, then the roles PAGE_ACCESS gives `name`; others get a 403 that says who may."""
    _, allowed = PAGE_ACCESS[name]

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not may(request.user, allowed):
                who = ", ".join(sorted(allowed)) if isinstance(allowed, frozenset) else allowed
                return HttpResponseForbidden(f"this page is for: {who}")
            return view(request, *args, **kwargs)

        return login_required(wrapped)

    return decorate
