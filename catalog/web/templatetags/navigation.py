"""`{% navigation as nav %}`: the header's links for this person, and which one is the page they are on.

The header must fit one line at 1440 px in English and German and collapse behind a menu button on a phone, so the
links are split: the everyday ones stay in the bar, the rest sit under "More". A link to a page the person may not
open is not offered (the tier floors to safety officers, the API tokens to those who manage them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import template
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from catalog.core import roles
from catalog.core.permissions import has_role, is_safety_officer, may_manage_api_tokens

register = template.Library()


def _translates(user: Any) -> bool:
    """Translators work on the card strings every day: for them the link sits in the bar, for others under More."""
    return has_role(user, roles.TRANSLATOR)


@dataclass(frozen=True)
class NavLink:
    label: Any
    url: str
    current: bool


@dataclass(frozen=True)
class Navigation:
    primary: list[NavLink]
    more: list[NavLink]

    @property
    def more_current(self) -> bool:
        return any(link.current for link in self.more)


# (label, url name, "exact" or a path prefix that marks the page current, who sees it)
_PRIMARY = (
    (_("Dashboard"), "home", "exact", None),
    (_("Catalog"), "catalog", "/catalog/", None),
    (_("Owner lookup"), "owners", "/owners/", None),
    (_("Teams"), "teams", "/teams/", None),
    (_("Findings"), "findings", "/findings/", None),
    (_("Revisions"), "revisions", "/revisions/", None),
    (_("Card strings"), "cards:matrix", "/cards/", _translates),
)
_MORE = (
    (_("Card strings"), "cards:matrix", "/cards/", lambda user: not _translates(user)),
    (_("MCP servers"), "mcp-servers", "/mcp/", None),
    (_("Tool-RAG"), "rag:playground", "/rag/", None),
    (_("Unknown names"), "usage:unknown", "/usage/", None),
    (_("Tier floors"), "tier-floors", "/floors/", is_safety_officer),
    (_("API tokens"), "api-tokens", "/tokens/", may_manage_api_tokens),
)


def _links(entries: tuple[tuple[Any, str, str, Any], ...], path: str, user: Any) -> list[NavLink]:
    links = []
    for label, name, match, allowed in entries:
        if allowed is not None and not allowed(user):
            continue
        url = reverse(name)
        current = path == url if match == "exact" else path.startswith(match)
        links.append(NavLink(label, url, current))
    return links


@register.simple_tag(takes_context=True)
def navigation(context: Any) -> Navigation:
    request = context["request"]
    return Navigation(_links(_PRIMARY, request.path, request.user), _links(_MORE, request.path, request.user))
