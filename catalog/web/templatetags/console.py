"""Small template helpers for the console: inline SVG bars, badges, shortened ids."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

register = template.Library()


@register.simple_tag
def bars(rows: list[tuple[str, int]], *, width: int = 320, title: str = "") -> SafeString:
    """A horizontal bar chart as inline SVG: one labelled bar per (label, value); no chart library."""
    rows = list(rows)
    if not rows:
        return SafeString("")
    top = max(value for _, value in rows) or 1
    bar_h, gap, label_w = 18, 6, 130
    height = len(rows) * (bar_h + gap)
    scale = (width - label_w - 50) / top
    items = format_html_join(
        "",
        '<g transform="translate(0,{})"><text x="0" y="13" class="bar-label">{}</text>'
        '<rect x="{}" y="0" width="{}" height="{}" rx="3" class="bar"></rect>'
        '<text x="{}" y="13" class="bar-value">{}</text></g>',
        (
            (
                i * (bar_h + gap),
                label,
                label_w,
                max(1, round(value * scale)),
                bar_h,
                label_w + max(1, round(value * scale)) + 6,
                value,
            )
            for i, (label, value) in enumerate(rows)
        ),
    )
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" width="{}" height="{}" viewBox="0 0 {} {}">{}</svg>',
        title,
        width,
        height,
        width,
        height,
        items,
    )


@register.filter
def short_id(value: Any, length: int = 8) -> str:
    text = str(value or "")
    return text if len(text) <= length + 1 else text[:length] + "…"


@register.filter
def system_rows(rows: list[tuple[str, str, int]], system: str) -> list[tuple[str, int]]:
    """(system, label, n) rows → (label, n) of one system, for `bars`."""
    return [(label, n) for s, label, n in rows if s == system]
