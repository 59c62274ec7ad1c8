"""The server-drawn bar chart: an image whose text alternative states every figure; no script, no library."""

from __future__ import annotations

import re

from django.template import Context, Template
from django.utils import translation

from catalog.web.templatetags.charts import bar_chart, duration_ms, percent


def render(points: object, **kwargs: str) -> str:
    """Through a template, as the pages use it (the keyword values passed as context variables)."""
    args = " ".join(f"{k}={k}" for k in kwargs)
    template = Template("{% load charts %}{% bar_chart points " + args + " %}")
    return template.render(Context({"points": points, **kwargs}))


def test_each_point_is_a_bar_and_the_text_alternative_states_the_figures() -> None:
    html = render(
        [("10:00", 4, 1), ("11:00", 0, 0), ("12:00", 8, 2)],
        label="Calls per hour",
        value_name="calls",
        secondary_name="errors",
    )
    assert html.startswith("<svg") and 'role="img"' in html
    label = re.search(r'aria-label="([^"]*)"', html).group(1)  # type: ignore[union-attr]
    assert label == (
        "Calls per hour. In all: calls 12, errors 3. "
        "10:00: calls 4, errors 1; 11:00: calls 0, errors 0; 12:00: calls 8, errors 2."
    )
    assert f"<title>{label}</title>" in html  # the same text as the SVG's own title
    assert html.count('class="bar-value"') == 3
    # Errors are drawn over the foot of their bar, only where there are any; the tallest bar fills the plot.
    assert html.count('class="bar-secondary"') == 2
    bar = r'class="bar-value" x="[^"]*" y="[^"]*" width="[^"]*" height="([^"]*)"'
    heights = [float(h) for h in re.findall(bar, html)]
    assert heights[1] == 0 and heights[2] == max(heights) and abs(heights[0] - heights[2] / 2) < 0.1
    assert "<script" not in html and "style=" not in html  # the Content-Security-Policy allows neither


def test_point_labels_and_names_are_escaped() -> None:
    html = render([("<b>", 1)], label='a "quoted" <label>')
    assert "<b>" not in html and "&lt;b&gt;" in html and "&quot;quoted&quot;" in html


def test_a_long_series_labels_only_some_points_and_no_points_draw_nothing() -> None:
    html = render([(f"{h:02d}:00", h, 0) for h in range(24)], label="x")
    assert html.count('class="bar-x"') == 6  # every fourth hour: readable at 390 px
    assert render([], label="x") == ""


def test_all_zero_draws_a_flat_chart_not_a_division_by_zero() -> None:
    html = render([("Mon 1", 0, 0), ("Tue 2", 0, 0)], label="x", value_name="calls")
    assert html.count('height="0"') == 2


def test_figures_are_localized() -> None:
    assert percent(0.025) == "2.5 %" and percent(None) == "—"
    assert duration_ms(1234.4) == "1,234 ms" and duration_ms(7.25) == "7.2 ms" and duration_ms(None) == "—"
    with translation.override("de"):
        assert percent(0.025).startswith("2,5")
    # The tag itself is callable from Python (the dashboard card and the tool page use the same drawing).
    assert "<svg" in bar_chart([("a", 1)], label="x")
