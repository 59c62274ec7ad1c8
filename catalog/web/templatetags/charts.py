"""Small server-drawn charts: inline SVG, no script, no chart library (styles: condor/usage.css).

`{% bar_chart points label=... value_name=... secondary_name=... %}` draws one vertical bar per point, a point
being (label, value) or (label, value, secondary), the secondary drawn over the foot of its bar (errors among
calls). The chart is an image to assistive technology (`role="img"`) whose name states every figure, so nothing
is shown only as a shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from django import template
from django.utils.formats import number_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

register = template.Library()

# The drawing in viewBox units (about one CSS pixel each on a phone; the SVG scales to its box).
PLOT_LEFT, PLOT_WIDTH = 34, 320
PLOT_TOP, PLOT_BOTTOM, HEIGHT = 10, 92, 112
MAX_X_LABELS = 7
MAX_BAR_WIDTH = 40


def _points(points: Sequence[Sequence[Any]]) -> list[tuple[str, int, int | None]]:
    out = []
    for point in points:
        label, value = str(point[0]), int(point[1] or 0)
        secondary = int(point[2] or 0) if len(point) > 2 else None
        out.append((label, value, secondary))
    return out


def _figures(value: int, secondary: int | None, value_name: str, secondary_name: str) -> str:
    """`calls 12, errors 1`: name before figure, so no plural form is needed in any language."""
    text = _("%(name)s %(value)s") % {"name": value_name, "value": value} if value_name else str(value)
    if secondary is not None:
        second = _("%(name)s %(value)s") % {"name": secondary_name, "value": secondary}
        text = _("%(first)s, %(second)s") % {"first": text, "second": second}
    return text


def chart_summary(label: str, points: list[tuple[str, int, int | None]], value_name: str, secondary_name: str) -> str:
    """The text alternative: the title, the totals, then every point's figures, in order."""
    has_secondary = any(s is not None for _, _, s in points)
    total = _figures(
        sum(v for _, v, _ in points),
        sum(s or 0 for _, _, s in points) if has_secondary else None,
        value_name,
        secondary_name,
    )
    each = "; ".join(
        _("%(point)s: %(figures)s") % {"point": p, "figures": _figures(v, s, value_name, secondary_name)}
        for p, v, s in points
    )
    return _("%(label)s. In all: %(total)s. %(each)s.") % {"label": label, "total": total, "each": each}


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _bar(
    i: int, row: tuple[str, int, int | None], *, slot: float, scale: float, labelled: bool, names: tuple[str, str]
) -> SafeString:
    point, value, secondary = row
    bar_w = max(1.0, min(slot * 0.7, MAX_BAR_WIDTH))  # a chart of two figures keeps bars, not slabs
    x = PLOT_LEFT + i * slot + (slot - bar_w) / 2
    h, second = value * scale, (secondary or 0) * scale
    tip = _("%(point)s: %(figures)s") % {"point": point, "figures": _figures(value, secondary, *names)}
    overlay = (
        format_html(
            '<rect class="bar-secondary" x="{}" y="{}" width="{}" height="{}"></rect>',
            _num(x),
            _num(PLOT_BOTTOM - second),
            _num(bar_w),
            _num(second),
        )
        if second
        else ""
    )
    text = (
        format_html(
            '<text class="bar-x" x="{}" y="{}" text-anchor="middle">{}</text>', _num(x + bar_w / 2), HEIGHT - 4, point
        )
        if labelled
        else ""
    )
    return format_html(
        '<g class="bar-point"><title>{}</title>'
        '<rect class="bar-value" x="{}" y="{}" width="{}" height="{}"></rect>{}{}</g>',
        tip,
        _num(x),
        _num(PLOT_BOTTOM - h),
        _num(bar_w),
        _num(h),
        overlay,
        text,
    )


@register.simple_tag
def bar_chart(
    points: Sequence[Sequence[Any]], *, label: str = "", value_name: str = "", secondary_name: str = ""
) -> SafeString:
    """An SVG bar chart of (label, value[, secondary]) points, left to right; nothing for no points."""
    rows = _points(points or [])
    if not rows:
        return SafeString("")
    top = max(max(v for _, v, _ in rows), max(s or 0 for _, _, s in rows), 1)
    slot = PLOT_WIDTH / len(rows)
    scale = (PLOT_BOTTOM - PLOT_TOP) / top
    every = max(1, math.ceil(len(rows) / MAX_X_LABELS))
    names = (value_name, secondary_name)
    bars = [_bar(i, row, slot=slot, scale=scale, labelled=i % every == 0, names=names) for i, row in enumerate(rows)]
    summary = chart_summary(label, rows, value_name, secondary_name)
    return format_html(
        '<svg class="bar-chart" viewBox="0 0 {} {}" role="img" aria-label="{}"><title>{}</title>'
        '<g class="bar-axis"><line x1="{}" x2="{}" y1="{}" y2="{}"></line>'
        '<line class="bar-top" x1="{}" x2="{}" y1="{}" y2="{}"></line>'
        '<text x="{}" y="{}" dy="0.35em" text-anchor="end">{}</text>'
        '<text x="{}" y="{}" dy="0.35em" text-anchor="end">0</text></g>{}</svg>',
        PLOT_LEFT + PLOT_WIDTH,
        HEIGHT,
        summary,
        summary,
        PLOT_LEFT,
        PLOT_LEFT + PLOT_WIDTH,
        PLOT_BOTTOM,
        PLOT_BOTTOM,
        PLOT_LEFT,
        PLOT_LEFT + PLOT_WIDTH,
        PLOT_TOP,
        PLOT_TOP,
        PLOT_LEFT - 4,
        PLOT_TOP,
        top,
        PLOT_LEFT - 4,
        PLOT_BOTTOM,
        format_html_join("", "{}", ((b,) for b in bars)),
    )


@register.simple_tag
def bar_chart_of(label: str, value_name: str, *pairs: Any) -> SafeString:
    """`{% bar_chart_of label value_name "a" 3 "b" 5 %}`: a bar chart of a few named figures written in the
    template (the dashboard's embedding state), the same drawing and text alternative as `bar_chart`."""
    if len(pairs) % 2:
        raise template.TemplateSyntaxError("bar_chart_of takes label, value name, then name and value pairs")
    points = [(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)]
    return bar_chart(points, label=label, value_name=value_name)


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    """A share 0..1 as a localized percentage (`2.5 %`); a dash for none."""
    if value is None:
        return "—"
    return _("%(n)s %%") % {"n": number_format(value * 100, digits)}


@register.filter
def duration_ms(value: float | None) -> str:
    """Milliseconds as the console shows them: whole above 10 ms, one decimal below; a dash for none."""
    if value is None:
        return "—"
    return _("%(n)s ms") % {"n": number_format(value, 0 if value >= 10 else 1)}
