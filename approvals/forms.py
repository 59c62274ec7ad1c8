"""Approvers' forms: the decision, the history filter, and the argument editor built from a tool's schema."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django import forms

from approvals.display import label_for
from approvals.domain import State
from approvals.models import TIER_KEYS


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject")])
    reason = forms.CharField(required=False, max_length=2000, strip=True)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("decision") == "reject" and not data.get("reason"):
            self.add_error("reason", "say why you reject this call (the runtime shows it)")
        return data


class HistoryFilterForm(forms.Form):
    state = forms.ChoiceField(
        required=False, choices=[("", "any state")] + [(s.value, s.value) for s in State if s != State.PENDING]
    )
    tier = forms.ChoiceField(required=False, choices=[("", "any tier")] + [(t, t) for t in TIER_KEYS])
    domain = forms.CharField(required=False, max_length=100)
    tool = forms.CharField(required=False, max_length=200)
    decided_by = forms.CharField(required=False, max_length=150)
    patient_ref = forms.CharField(required=False, max_length=200)
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


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
            raise forms.ValidationError(f"not valid JSON: {exc}") from exc


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
