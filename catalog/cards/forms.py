"""Forms of the translator's workspace: the matrix filters (in the URL, shareable) and the editor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from catalog.cards.display import CHECK_LABELS, MODULES, STATE_LABELS
from catalog.cards.domain.locales import SOURCE_LOCALE
from catalog.cards.domain.valuesets import value_sets
from catalog.cards.selectors.matrix import MatrixFilters
from catalog.models import CardLocale
from catalog.web.forms import choice_field


class MatrixFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label=_("Search"))
    locale = forms.ChoiceField(required=False, choices=[], label=_("Locale"))
    module = forms.ChoiceField(required=False, choices=[], label=_("Module"))
    state = forms.ChoiceField(required=False, choices=[], label=_("State"))
    check = forms.ChoiceField(required=False, choices=[], label=_("Check failing"))
    value_set = forms.ChoiceField(required=False, choices=[], label=_("Value set"))

    def __init__(self, *args: Any, locales: Sequence[CardLocale], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["q"].widget.attrs.update({"type": "search", "placeholder": _("key, English or translation")})
        choice_field(self, "locale").choices = [(loc.code, loc.code) for loc in locales if loc.code != SOURCE_LOCALE]
        choice_field(self, "module").choices = [("", _("all modules"))] + [(m, m) for m in MODULES]
        choice_field(self, "state").choices = [("", _("any state"))] + [
            (str(s), label) for s, label in STATE_LABELS.items()
        ]
        choice_field(self, "check").choices = [("", _("any or none")), ("any", _("any check failing"))] + [
            (str(c), label) for c, label in CHECK_LABELS.items()
        ]
        choice_field(self, "value_set").choices = [("", _("all value sets"))] + [
            (vs.id, f"{vs.id} ({vs.elements})") for vs in value_sets().values()
        ]

    def filters(self, default_locale: str) -> MatrixFilters:
        if not self.is_bound or not self.is_valid():
            return MatrixFilters(locale=default_locale)
        data = self.cleaned_data
        return MatrixFilters(
            locale=data["locale"] or default_locale,
            module=data["module"],
            state=data["state"],
            check=data["check"],
            value_set=data["value_set"],
            q=data["q"].strip(),
        )


class TranslationForm(forms.Form):
    """The editor's fields; the text arrives as one `form` value per plural form (request.POST.getlist)."""

    key = forms.CharField(max_length=200)
    lang = forms.CharField(max_length=20)
    same_as_source = forms.BooleanField(required=False)
    comment = forms.CharField(required=False, max_length=2000)
    intent = forms.ChoiceField(required=False, choices=[("save", "save"), ("check", "check")])
    back = forms.CharField(required=False, max_length=2000)


class ReviewForm(forms.Form):
    key = forms.CharField(max_length=200)
    lang = forms.CharField(max_length=20)
    back = forms.CharField(required=False, max_length=2000)
