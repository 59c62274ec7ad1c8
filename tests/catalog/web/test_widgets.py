"""QuickSelect writes out the markup Django's Select renders through its templates."""

from __future__ import annotations

import re

from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import override

from catalog.web.widgets import QuickSelect

CHOICES = [("", _("any")), ("a&b", "A & <b>"), ("2", "zwei"), ('x"y', 'quote"d')]


def _normalized(markup: str) -> str:
    return re.sub(r">\s+<", "><", markup.strip())


def test_quick_select_renders_what_djangos_select_renders() -> None:
    for value in (None, "", "a&b", "2", 'x"y', "missing"):
        for attrs in (None, {"id": "id_f", "class": "wide", "disabled": True, "hidden": False}):
            django_select = forms.Select(choices=CHOICES).render("f", value, attrs)
            quick = QuickSelect(choices=CHOICES).render("f", value, attrs)
            assert _normalized(quick) == _normalized(django_select), (value, attrs)
    selected = QuickSelect(choices=CHOICES).render("f", "a&b")
    assert '<option value="a&amp;b" selected>A &amp; &lt;b&gt;</option>' in selected


def test_labels_are_translated_when_rendered() -> None:
    with override("de"):
        assert '<option value="" selected>alle</option>' in QuickSelect(choices=CHOICES).render("f", "")


def test_option_groups_render_through_the_templates() -> None:
    grouped = [("Group", [("1", "one"), ("2", "two")]), ("3", "three")]
    assert _normalized(QuickSelect(choices=grouped).render("g", "2")) == _normalized(
        forms.Select(choices=grouped).render("g", "2")
    )
    assert '<optgroup label="Group">' in QuickSelect(choices=grouped).render("g", "2")


def test_the_catalog_filter_form_uses_it() -> None:
    from catalog.web.forms import CatalogFilterForm

    form = CatalogFilterForm(
        {"owner": "-"},
        facets={"modules": ["m"], "teams": ["t"], "profiles": ["p"], "systems": ["condor", "tucan"]},
        sorts=["id"],
    )
    assert isinstance(form.fields["owner"].widget, QuickSelect)
    assert '<option value="-" selected>unowned</option>' in str(form["owner"])
