from __future__ import annotations

from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from catalog.domain.ownership import UNOWNED
from catalog.domain.rules import RULES
from catalog.domain.vocabulary import Availability, Plane, PolicyClass, RetryClass, System
from catalog.models import RevisionReview, Severity, Waiver
from catalog.selectors.catalog import CatalogFilters
from catalog.usage.selectors.health import dead_days
from catalog.web.widgets import QuickSelect

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


class FindingFilterForm(forms.Form):
    rule = forms.ChoiceField(
        label=_("Rule"),
        widget=QuickSelect,
        required=False,
        choices=[("", _("all rules"))] + [(r, r) for r in sorted(RULES)],
    )
    severity = forms.ChoiceField(
        label=_("Severity"),
        widget=QuickSelect,
        required=False,
        choices=[("", _("all severities")), (Severity.ERROR.value, _("Error")), (Severity.WARNING.value, _("Warning"))],
    )
    system = forms.ChoiceField(
        label=_("System"),
        widget=QuickSelect,
        required=False,
        choices=[("", _("every system"))] + [(s.value, s.value) for s in System],
    )
    owner = forms.CharField(
        label=_("Owner"), required=False, max_length=100, help_text=_('team id, or "-" for unowned')
    )
    waived = forms.ChoiceField(
        label=_("Waived"),
        widget=QuickSelect,
        required=False,
        choices=[("", _("waived or not")), ("yes", _("waived")), ("no", _("not waived"))],
    )

    def __init__(self, *args: Any, systems: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if systems is not None:  # condor, tucan and every MCP server's catalog
            choice_field(self, "system").choices = [("", _("every system"))] + [(s, s) for s in systems]

    def waived_value(self) -> bool | None:
        return {"yes": True, "no": False}.get(self.cleaned_data.get("waived") or "")


class ReviewForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"),
        choices=[
            (RevisionReview.Decision.APPROVE.value, _("Approve")),
            (RevisionReview.Decision.REQUEST_CHANGES.value, _("Request changes")),
        ],
        widget=forms.RadioSelect,
    )
    comment = forms.CharField(
        label=_("Comment"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=4000,
        help_text=_("Say what you checked, or what must change."),
    )


class _WaiverFields(forms.Form):
    """What every waiver asks for: why, and until when (the service checks the bounds, as for the API)."""

    justification = forms.CharField(label=_("Justification"), widget=forms.Textarea(attrs={"rows": 3}), max_length=4000)
    expires_on = forms.DateField(label=_("Expires on"), widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        today = timezone.localdate()
        self.fields["expires_on"].initial = (today + timedelta(days=30)).isoformat()
        self.fields["expires_on"].help_text = _("at most %(days)s days ahead") % {"days": Waiver.MAX_DAYS}
        self.fields["expires_on"].widget.attrs.update(
            min=(today + timedelta(days=1)).isoformat(), max=(today + timedelta(days=Waiver.MAX_DAYS)).isoformat()
        )

    def expires_at(self) -> datetime:
        # A waiver runs to the end of the chosen day, in the console's time zone.
        return timezone.make_aware(datetime.combine(self.cleaned_data["expires_on"], time(23, 59, 59)))


class WaiverForm(_WaiverFields):
    rule = forms.ChoiceField(label=_("Rule"), choices=[])
    field_order = ["rule", "justification", "expires_on"]

    def __init__(self, *args: Any, rules: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "rule").choices = [(r, r) for r in rules]


class BulkWaiverForm(_WaiverFields):
    """One justification and one expiry for the findings ticked on the findings page (at most BULK_WAIVE_MAX)."""

    findings = forms.TypedMultipleChoiceField(
        label=_("Findings"),
        coerce=int,
        choices=[],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Select at least one finding to waive.")},
    )
    field_order = ["justification", "expires_on", "findings"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The choices are whatever ids were posted: the service refuses any that cannot be waived, as a whole.
        posted = self.data.getlist("findings") if hasattr(self.data, "getlist") else []
        choice_field(self, "findings").choices = [(p, p) for p in posted if str(p).isdigit()]


def focus_first_error(form: forms.BaseForm) -> None:
    """Autofocus the first field with an error, so the person lands on what to fix, not at the top of the page."""
    first = next((name for name in form.fields if name in form.errors), None)
    if first is not None:
        form.fields[first].widget.attrs["autofocus"] = True


def choice_field(form: forms.BaseForm, name: str) -> forms.ChoiceField:
    """The form's own copy of a ChoiceField declared on its class, to set its choices per request."""
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField), f"{name} is declared as a ChoiceField"
    return field


def _choices_of(enum: type[StrEnum], blank: StrOrPromise) -> list[tuple[str, StrOrPromise]]:
    return [("", blank)] + [(m.value, m.value) for m in enum]


YES_NO = [("", _("any")), ("yes", _("yes")), ("no", _("no"))]


class CatalogFilterForm(forms.Form):
    """The catalog's filters; every field is optional and the URL carries them (shareable links)."""

    q = forms.CharField(required=False, max_length=200, label=_("Search"))
    system = forms.ChoiceField(
        widget=QuickSelect, required=False, choices=_choices_of(System, _("any")), label=_("System")
    )
    plane = forms.ChoiceField(
        widget=QuickSelect, required=False, choices=_choices_of(Plane, _("any")), label=_("Plane")
    )
    module = forms.ChoiceField(widget=QuickSelect, required=False, choices=[], label=_("Module"))
    owner = forms.ChoiceField(widget=QuickSelect, required=False, choices=[], label=_("Owner"))
    availability = forms.ChoiceField(
        widget=QuickSelect, required=False, choices=_choices_of(Availability, _("any")), label=_("Availability")
    )
    policy = forms.ChoiceField(
        widget=QuickSelect, required=False, choices=_choices_of(PolicyClass, _("any")), label=_("Policy class")
    )
    mutating = forms.ChoiceField(widget=QuickSelect, required=False, choices=YES_NO, label=_("Mutating"))
    hitl = forms.ChoiceField(
        widget=QuickSelect,
        required=False,
        choices=[("", _("any")), ("high", "high"), ("low", "low"), ("none", _("none"))],
        label=_("HITL tier"),
    )
    retry = forms.ChoiceField(
        widget=QuickSelect, required=False, choices=_choices_of(RetryClass, _("any")), label=_("Effective retry")
    )
    profile = forms.ChoiceField(widget=QuickSelect, required=False, choices=[], label=_("Plan-eligible under"))
    findings = forms.ChoiceField(
        widget=QuickSelect,
        required=False,
        choices=[("", _("any")), ("error", _("with errors")), ("any", _("with findings")), ("none", _("none"))],
        label=_("Findings"),
    )
    signed_off = forms.ChoiceField(widget=QuickSelect, required=False, choices=YES_NO, label=_("Signed off"))
    calls = forms.ChoiceField(widget=QuickSelect, required=False, choices=[], label=_("Calls"))
    sort = forms.ChoiceField(required=False, choices=[], widget=forms.HiddenInput)

    def __init__(self, *args: Any, facets: dict[str, list[str]], sorts: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "system").choices = [("", _("any"))] + [(s, s) for s in facets.get("systems", [])]
        choice_field(self, "module").choices = [("", _("any"))] + [(m, m) for m in facets["modules"]]
        choice_field(self, "owner").choices = [("", _("any")), (UNOWNED, _("unowned"))] + [
            (t, t) for t in facets["teams"]
        ]
        choice_field(self, "profile").choices = [("", _("—"))] + [(p, p) for p in facets["profiles"]]
        days = dead_days()
        choice_field(self, "calls").choices = [
            ("", _("any")),
            ("none", ngettext("none in %(n)d day", "none in %(n)d days", days) % {"n": days}),
            ("some", ngettext("some in %(n)d day", "some in %(n)d days", days) % {"n": days}),
        ]
        choice_field(self, "sort").choices = [("", "")] + [(s, s) for s in sorts] + [(f"-{s}", f"-{s}") for s in sorts]

    def filters(self) -> CatalogFilters:
        """What the submitted filters select. A form with any value that does not validate selects the whole
        catalog, as a fresh page does (its errors show beside their fields)."""
        if not self.is_bound or not self.is_valid():
            return CatalogFilters()
        # The fields are CatalogFilters' own names; only the yes/no choices and the default sort need reading.
        yes_no = {"yes": True, "no": False}
        values = dict(self.cleaned_data)
        values.update(
            mutating=yes_no.get(values["mutating"]),
            signed_off=yes_no.get(values["signed_off"]),
            sort=values["sort"] or "id",
        )
        return CatalogFilters(**values)


class OwnerLookupForm(forms.Form):
    q = forms.CharField(max_length=200, label=_("Tool id, any spelling"))


class LanguageForm(forms.Form):
    language = forms.ChoiceField(choices=[])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "language").choices = list(settings.LANGUAGES)
