"""Form widgets the console renders often enough for their cost to matter."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString


def _attrs(attrs: dict[str, Any]) -> SafeString:
    """Django's attrs.html: in order, a True value as a bare name, a False one left out."""
    return format_html_join(
        "",
        "{}",
        (
            (format_html(" {}", k) if v is True else format_html(' {}="{}"', k, str(v)),)
            for k, v in attrs.items()
            if v is not False
        ),
    )


class QuickSelect(forms.Select):
    """A Select written out in Python: the markup of Django's select.html and select_option.html, without two
    template renders per option. The catalog's filter form has about a hundred options; rendering them through
    the templates was a quarter of the catalog page's CPU. Option groups fall back to the templates."""

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> SafeString:
        widget = self.get_context(name, value, attrs)["widget"]
        if any(group_name for group_name, _, _ in widget["optgroups"]):
            return super().render(name, value, attrs, renderer)
        options = format_html_join(
            "\n",
            '  <option value="{}"{}>{}</option>',
            (
                (str(option["value"]), _attrs(option["attrs"]), option["label"])
                for _, group, _ in widget["optgroups"]
                for option in group
            ),
        )
        return format_html('<select name="{}"{}>\n{}\n</select>', widget["name"], _attrs(widget["attrs"]), options)
