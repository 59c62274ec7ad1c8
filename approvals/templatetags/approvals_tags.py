from __future__ import annotations

from datetime import timedelta

from django import template

from approvals.display import short_id
from approvals.labels import DISPATCH_LABELS, STATE_LABELS, TIER_LABELS, label
from catalog.models import Severity

register = template.Library()


@register.filter
def duration(value: timedelta | None) -> str:
    """Decision latency for people: `42 s`, `3 min 5 s`, `2 h 10 min`."""
    if value is None:
        return "—"
    seconds = max(0, int(value.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@register.filter
def request_state_label(value: str) -> str:
    """`approved` → the word in the person's language (the badge's class keeps the stored value)."""
    return label(STATE_LABELS, value)


@register.filter
def tier_label(value: str) -> str:
    return label(TIER_LABELS, value)


@register.filter
def dispatch_label(value: str) -> str:
    return label(DISPATCH_LABELS, value)


@register.filter
def severity_label(value: str) -> str:
    """A finding's severity in the person's language (`error` → Fehler)."""
    return str(dict(Severity.choices).get(value, value))


@register.filter
def short_ref(value: str) -> str:
    """Ids shortened as the queue shows them (`3f2a61d0…9c1d`)."""
    return short_id(value or "")
