"""`{{ team.oncall|contact_link }}`: a team's on-call handle or channel as something a person can act on.

On-call engineers open the owner lookup from a page at 3 a.m.: the handle should page someone in one tap. An e-mail
address becomes `mailto:`, a phone number `tel:`, an http(s) URL itself; a chat handle (`@x`) or channel (`#x`) links
through `CONDOR_CHAT_URL` when the deployment sets one. Anything else stays text: we never invent a target.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from django import template
from django.conf import settings
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

_EMAIL = re.compile(r"^[^@\s/:]+@[^@\s/:]+\.[A-Za-z]{2,}$")
_PHONE = re.compile(r"^\+?[0-9][0-9 ()./-]{4,30}$")
_URL = re.compile(r"^https?://[^\s<>\"']+$")
_CHAT = re.compile(r"^[@#][A-Za-z0-9._-]{1,100}$")


def contact_href(value: str) -> str:
    """The link target for an on-call handle or channel, or "" when it names nothing we can open."""
    value = (value or "").strip()
    if _EMAIL.match(value):
        return f"mailto:{value}"
    if _URL.match(value):
        return value
    if _PHONE.match(value) and sum(c.isdigit() for c in value) >= 5:
        return "tel:" + re.sub(r"[^0-9+]", "", value)
    chat = getattr(settings, "CONDOR_CHAT_URL", "")
    if chat and _CHAT.match(value):
        return chat.replace("{name}", quote(value[1:], safe=""))
    return ""


@register.filter
def contact_link(value: str) -> SafeString | str:
    href = contact_href(value)
    if not href:
        return value or "—"
    return format_html('<a class="contact" href="{}">{}</a>', href, value)
