from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .domain.rules import RULES
from .domain.vocabulary import System
from .models import RevisionReview, Severity, Waiver


class FindingFilterForm(forms.Form):
    rule = forms.ChoiceField(required=False, choices=[("", _("all rules"))] + [(r, r) for r in sorted(RULES)])
    severity = forms.ChoiceField(required=False, choices=[("", _("all severities"))] + list(Severity.choices))
    system = forms.ChoiceField(required=False, choices=[("", _("both systems"))] + [(s.value, s.value) for s in System])
    owner = forms.CharField(required=False, max_length=100, help_text=_('team id, or "-" for unowned'))
    waived = forms.ChoiceField(
        required=False, choices=[("", _("waived or not")), ("yes", _("waived")), ("no", _("not waived"))]
    )

    def waived_value(self) -> bool | None:
        return {"yes": True, "no": False}.get(self.cleaned_data.get("waived") or "")


class ReviewForm(forms.Form):
    decision = forms.ChoiceField(choices=RevisionReview.Decision.choices, widget=forms.RadioSelect)
    comment = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=4000)


class WaiverForm(forms.Form):
    rule = forms.ChoiceField(choices=[])
    justification = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=4000)
    expires_on = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: object, rules: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["rule"].choices = [(r, r) for r in rules]
        self.fields["expires_on"].initial = (timezone.localdate() + timedelta(days=30)).isoformat()
        self.fields["expires_on"].help_text = _("at most %(days)s days ahead") % {"days": Waiver.MAX_DAYS}
