"""Sentences a person reads, kept as a template and its parameters so a page can show them in the reader's language.

A rule's finding message or a Tool-RAG "why not" sentence is built where Django is not imported. It is kept as
an English template (`%(name)s` placeholders) and its parameters; `render()` gives the English text the API and the
stored `message` carry, `as_json()` what a page translates later (catalog.web.templatetags.messages_i18n). A
parameter may itself be a `Message` (a clause with its own words), translated on its own.

`N_` only marks a template for extraction (a Babel keyword in the Makefile and tests/test_i18n.py): the
translation happens when a page renders, in the reader's language, not when the rule runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def N_(template: str) -> str:  # noqa: N802 (gettext_noop's customary short name)
    """Marks `template` as a UI string to translate; returns it unchanged."""
    return template


@dataclass(frozen=True)
class Message:
    template: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def render(self, translate: Callable[[str], str] | None = None) -> str:
        """The sentence, in English or through `translate` (gettext) for each template, nested ones included."""
        template = translate(self.template) if translate else self.template
        return template % {k: _value(v, translate) for k, v in self.params.items()}

    def as_json(self) -> dict[str, Any]:
        return {"t": self.template, "p": {k: _json(v) for k, v in self.params.items()}}

    def __str__(self) -> str:
        return self.render()


def _value(v: Any, translate: Callable[[str], str] | None) -> Any:
    return v.render(translate) if isinstance(v, Message) else v


def _json(v: Any) -> Any:
    return v.as_json() if isinstance(v, Message) else v


def from_json(data: Any) -> Message | None:
    """The `Message` stored by `as_json`, or None when `data` is not one (a row from before messages were kept)."""
    if not isinstance(data, dict) or not isinstance(data.get("t"), str) or not isinstance(data.get("p", {}), dict):
        return None
    params: dict[str, Any] = {}
    for k, v in data.get("p", {}).items():
        nested = from_json(v) if isinstance(v, dict) else None
        params[k] = nested if nested is not None else v
    return Message(data["t"], params)


def render_json(data: Any, translate: Callable[[str], str] | None, fallback: str) -> str:
    """A stored message rendered through `translate`; `fallback` (the stored English) when it cannot be: no
    message kept, or a parameter missing or of the wrong kind for the (translated) template."""
    message = from_json(data)
    if message is None:
        return fallback
    try:
        return message.render(translate)
    except (KeyError, TypeError, ValueError):
        return fallback
