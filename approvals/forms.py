"""Approvers' forms: the decision, the history filter, and the argument editor built from a tool's schema."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from django import forms
from django.utils.translation import gettext_lazy as _

from approvals.display import label_for
from approvals.domain import State
from approvals.labels import STATE_LABELS, TIER_LABELS
from approvals.models import TIER_KEYS

REASON_MAX = 2000

F = TypeVar("F", bound=forms.Form)


def focus_first_error(form: F) -> F:
    """The person lands on what to fix, not at the top of the page: `autofocus` on the first invalid field
    (Django itself adds `aria-invalid` and `aria-describedby` pointing at the field's error list)."""
    first = next((name for name in form.fields if name in form.errors), None)
    if first is not None:
        form.fields[first].widget.attrs["autofocus"] = True
    return form


class DecisionForm(forms.Form):
    """One decision. `auto_id` tells the forms on one page apart (the queue has one per request)."""

    decision = forms.ChoiceField(choices=[("approve", _("approve")), ("reject", _("reject"))])
    reason = forms.CharField(label=_("Reason"), required=False, max_length=REASON_MAX, strip=True)

    def __init__(self, *args: Any, placeholder: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].widget.attrs.update(maxlength=REASON_MAX)
        if placeholder:
            self.fields["reason"].widget.attrs.update(placeholder=placeholder, **{"aria-label": placeholder})

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("decision") == "reject" and not data.get("reason"):
            self.add_error("reason", _("Say why you reject this call (the runtime shows it)."))
        return data


def queue_decision_form(request_id: object, data: Any = None) -> DecisionForm:
    """The decision form of one queue card: ids `reason-<request id>`, as the keyboard script expects."""
    form = DecisionForm(data, auto_id=f"%s-{request_id}", placeholder=str(_("Reason (required to reject)")))
    if not form.is_bound or not form.errors:
        # Kept across the queue's polls, so a reason being typed survives the list re-rendering. Not on a refused
        # form: htmx would put the old (valid-looking) field back instead of the one that shows the error.
        form.fields["reason"].widget.attrs["hx-preserve"] = True
    return form


class BulkApproveForm(forms.Form):
    """Several tier-low requests, one reason. The service refuses each request that is not tier low."""

    reason = forms.CharField(
        label=_("Reason for the selected (optional)"), required=False, max_length=REASON_MAX, strip=True
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "bulk_%s")
        super().__init__(*args, **kwargs)
        self.fields["reason"].widget.attrs.update(maxlength=REASON_MAX)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        ids = self.data.getlist("ids") if hasattr(self.data, "getlist") else []
        data["ids"] = [i for i in ids if i]
        if not data["ids"]:
            self.add_error("reason", _("Select at least one tier-low request (the boxes on the left of each)."))
        return data


class HistoryFilterForm(forms.Form):
    state = forms.ChoiceField(
        label=_("State"),
        required=False,
        choices=[("", _("any state"))] + [(s.value, STATE_LABELS[s.value]) for s in State if s != State.PENDING],
    )
    tier = forms.ChoiceField(
        label=_("Tier"), required=False, choices=[("", _("any tier"))] + [(t, TIER_LABELS[t]) for t in TIER_KEYS]
    )
    domain = forms.CharField(label=_("Domain"), required=False, max_length=100)
    tool = forms.CharField(label=_("Tool"), required=False, max_length=200)
    decided_by = forms.CharField(label=_("Decided by"), required=False, max_length=150)
    patient_ref = forms.CharField(label=_("Patient"), required=False, max_length=200)
    since = forms.DateField(label=_("Since"), required=False, widget=forms.DateInput(attrs={"type": "date"}))


class JSONValueField(forms.CharField):
    """An argument the editor has no widget for (object, array): edited as JSON."""

    widget = forms.Textarea(attrs={"rows": 2})

    def prepare_value(self, value: Any) -> Any:
        return value if isinstance(value, str) or value is None else json.dumps(value, ensure_ascii=False)

    def to_python(self, value: Any) -> Any:
        value = super().to_python(value)
        if value in (None, ""):
            return None
        try:
            return json.loads(value)
        except ValueError as exc:
            raise forms.ValidationError(_("Not valid JSON: %(error)s"), params={"error": exc}) from exc


def _field_for(key: str, spec: Mapping[str, Any], schema: Mapping[str, Any], required: bool) -> forms.Field:
    label = label_for(key, schema)
    kind = spec.get("type")
    common: dict[str, Any] = {"label": label, "required": False, "help_text": key}
    if "enum" in spec and all(isinstance(v, str) for v in spec["enum"]):
        choices = ([] if required else [("", "—")]) + [(v, v) for v in spec["enum"]]
        return forms.ChoiceField(choices=choices, **common)
    if kind == "boolean":
        return forms.NullBooleanField(widget=forms.NullBooleanSelect, **common)
    if kind == "integer":
        return forms.IntegerField(**common)
    if kind == "number":
        return forms.FloatField(**common)
    if kind == "string":
        return forms.CharField(strip=False, **common)
    return JSONValueField(**common)


class ArgsEditForm(forms.Form):
    """One field per top-level property of the tool's input schema, prefilled with the proposal.

    Every field is optional here: the schema, checked by the service, is the one judge of what is required.
    An emptied field drops the argument; arguments outside the schema's properties are kept as proposed.
    """

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        schema: Mapping[str, Any],
        proposed: Mapping[str, Any],
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("prefix", "arg")
        super().__init__(data, initial=dict(proposed), **kwargs)
        self.schema = schema
        self.proposed = dict(proposed)
        props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        required = set(schema.get("required") or [])
        for key, spec in (props or {}).items():
            self.fields[key] = _field_for(key, spec if isinstance(spec, Mapping) else {}, schema, key in required)

    def edited_args(self) -> dict[str, Any]:
        assert self.is_valid()
        out = {k: v for k, v in self.proposed.items() if k not in self.fields}
        for key in self.fields:
            value = self.cleaned_data.get(key)
            if value is None or value == "":
                continue
            out[key] = value
        return out
