"""Stored sentences and state words in the reader's language.

`{{ finding|finding_text }}`: a finding's message (catalog.domain.messages) translated; the stored English
`message` when the row predates kept messages or its parameters no longer fit. `{{ data|message_text:fallback }}`:
any message kept as JSON (a Tool-RAG "why not" in an evaluation). `{{ value|state_label }}`: a state word
(`pending-review`, `error`, `weakening`, ...) as a person reads it; the raw value stays in data attributes and CSS.
The API keeps the English `message`: its answers are for machines.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import gettext

from catalog.domain.messages import render_json
from catalog.models.labels import state_label as _state_label

register = template.Library()


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


@register.filter
def finding_text(finding: Any) -> str:
    """A finding (model row, dict or domain value with `text` and `message`) in the current language."""
    return render_json(_get(finding, "text"), gettext, str(_get(finding, "message") or ""))


@register.filter
def message_text(data: Any, fallback: str = "") -> str:
    """A message stored as JSON in the current language, `fallback` when there is none to render."""
    return render_json(data, gettext, fallback)


@register.filter
def state_label(value: Any) -> str:
    return _state_label(value)
