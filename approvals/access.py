"""Who may open which approvals page (the console's PAGE_ACCESS convention, see catalog/access.py).

Pages list what the person may see; each request is then checked on its own (its domain, four-eyes):
a stranger to a request's domain gets a 404, not a hint that it exists.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http.response import HttpResponseBase

from catalog.core import roles
from catalog.core.access import SIGNED_IN, SUPERUSER
from catalog.core.access import page as console_page

DECIDERS = frozenset({roles.APPROVER, settings.APPROVALS_ESCALATION_GROUP})
# Safety officers and superusers read every request; deciding still needs the request's domain group.
READERS = DECIDERS | {roles.SAFETY_OFFICER, SUPERUSER}

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


def page(name: str) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """The console's access decorator, reading this app's registry."""
    return console_page(name, registry=PAGE_ACCESS)
