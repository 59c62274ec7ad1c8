"""A live preview of card chrome: the card a string appears on, rendered in one locale with sample clinical
data. The chrome is localized; the data (drug names, ICD codes, patient names, dates) never is.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from catalog.cards.domain.locales import PluralSpec, plural_spec
from catalog.cards.domain.text import SAMPLE_VALUES, render
from catalog.cards.domain.valuesets import Code, ValueSet, value_set_for_key, value_sets

# Sample clinical data per card family and key/value field, exactly as a source system would hold it.
SAMPLE_FIELDS: dict[str, dict[str, str]] = {
    "patient": {
        "name": "Erika Mustermann",
        "birthDate": "1964-08-12",
        "gender": "F",
        "insurance": "AOK Bayern",
        "insuranceNumber": "A123456789",
        "address": "Heidestraße 17, 51147 Köln",
        "phone": "+49 221 1234567",
        "primaryCare": "Dr. med. Anna Schmidt",
    },
    "medication": {
        "drug": "Metformin 500 mg",
        "dose": "500 mg",
        "route": "p.o.",
        "frequency": "1-0-1",
        "prescriber": "Dr. med. Jonas Weber",
        "start": "2024-11-02",
        "end": "—",
        "pzn": "01234567",
        "indication": "E11.9",
    },
    "allergy": {
        "substance": "Penicillin G",
        "reaction": "Urtikaria",
        "category": "medication",
        "onset": "2019-06-03",
        "recorded": "2023-01-12",
    },
    "condition": {
        "code": "E11.9",
        "display": "Diabetes mellitus, Typ 2",
        "onset": "2018-04-20",
        "recordedBy": "Dr. med. Anna Schmidt",
        "severity": "—",
    },
    "observation": {
        "code": "4548-4",
        "value": "7.2",
        "unit": "%",
        "reference": "4.0–6.0",
        "interpretation": "H",
        "effective": "2025-03-14 08:10",
    },
    "appointment": {
        "date": "2025-03-21",
        "time": "09:30",
        "practitioner": "Dr. med. Jonas Weber",
        "location": "Praxis 2",
        "reason": "HbA1c",
        "duration": "20",
    },
    "encounter": {
        "class": "AMB",
        "period": "2025-03-14",
        "department": "Innere Medizin",
        "attending": "Dr. med. Jonas Weber",
        "diagnosis": "E11.9",
    },
    "document": {"type": "Arztbrief", "date": "2025-03-14", "author": "Dr. med. Jonas Weber", "pages": "4"},
    "invoice": {
        "number": "RE-2025-00417",
        "date": "2025-03-14",
        "total": "128.40 EUR",
        "payer": "AOK Bayern",
        "due": "2025-04-13",
        "balance": "0.00 EUR",
    },
    "claim": {"insurer": "AOK Bayern", "submitted": "2025-03-15", "amount": "128.40 EUR"},
    "lab": {
        "test": "HbA1c",
        "value": "7.2",
        "unit": "%",
        "reference": "4.0–6.0",
        "flag": "H",
        "collected": "2025-03-14 07:45",
        "lab": "Labor Dr. Wisplinghoff",
    },
    "vitals": {
        "bloodPressure": "128/82 mmHg",
        "heartRate": "72 /min",
        "temperature": "36.8 °C",
        "respiratoryRate": "16 /min",
        "oxygenSaturation": "97 %",
        "weight": "82.4 kg",
        "height": "176 cm",
        "bmi": "26.6",
        "measuredAt": "2025-03-14 08:02",
    },
    "hitl": {
        "tool": "prescribeMedication",
        "domain": "medication",
        "requestedBy": "Dr. med. Jonas Weber",
        "expires": "2025-03-14 09:45",
    },
}

# Which card shows which status value set, in which key/value field, and the code it shows by default.
STATUS_FIELDS: dict[str, tuple[str, str, str]] = {
    "medicationrequest-status": ("card.medication", "status", "active"),
    "allergyintolerance-clinical": ("card.allergy", "clinicalStatus", "active"),
    "allergyintolerance-verification": ("card.allergy", "verificationStatus", "confirmed"),
    "allergy-intolerance-criticality": ("card.allergy", "criticality", "high"),
    "allergy-intolerance-type": ("card.allergy", "type", "allergy"),
    "observation-status": ("card.observation", "status", "final"),
    "appointmentstatus": ("card.appointment", "status", "booked"),
    "encounter-status": ("card.encounter", "status", "finished"),
    "condition-clinical": ("card.condition", "clinicalStatus", "active"),
    "document-reference-status": ("card.document", "status", "current"),
    "invoice-status": ("card.invoice", "status", "issued"),
    "fm-status": ("card.claim", "status", "active"),
}
# The approval card: its tier and domain values are chrome too (hitl.tier.*, hitl.domain.*).
HITL_FAMILY = "hitl.card"
HITL_CODED_FIELDS = {"tier": "hitl.tier.high", "domain": "hitl.domain.medication"}
# Strings that belong to no one card (common chrome, severity enums) are previewed on this one.
DEFAULT_FAMILY = "card.medication"


def family_of(key: str) -> str:
    """The card a key's preview shows."""
    parts = key.split(".")
    if parts[0] == "card" and len(parts) >= 3:
        return ".".join(parts[:2])
    if parts[0] == "hitl":
        return HITL_FAMILY
    if parts[0] == "status":
        found = value_set_for_key(key)
        if found:
            return STATUS_FIELDS.get(found[0].id, (DEFAULT_FAMILY, "", ""))[0]
    return DEFAULT_FAMILY


def preview_prefixes(key: str) -> list[str]:
    """The key prefixes whose strings the preview of `key` needs (bounded: one card's chrome)."""
    family = family_of(key)
    prefixes = [family + "."]
    prefixes += [value_sets()[vs].key_prefix + "." for vs, (fam, _, _) in STATUS_FIELDS.items() if fam == family]
    if family == HITL_FAMILY:
        prefixes += ["hitl.tier.", "hitl.domain.", "hitl.state."]
    return prefixes


# The inline markup cards render; everything else in a string is shown as text (escaped).
_SAFE_TAG = re.compile(r"&lt;(/?)(strong|em|b|i|br)\s*/?&gt;")


@dataclass(frozen=True)
class PreviewText:
    text: str
    key: str
    fallback: bool  # shown from a fallback locale: this locale has no shipping text for it
    edited: bool = False

    @property
    def html(self) -> str:
        """Escaped text with only bare <strong>, <em>, <b>, <i>, <br> kept as markup: safe to mark safe."""
        return _SAFE_TAG.sub(lambda m: f"<{m.group(1)}{m.group(2)}>", html.escape(self.text))


@dataclass(frozen=True)
class PreviewRow:
    label: PreviewText
    value: str
    status: PreviewText | None = None


@dataclass(frozen=True)
class Preview:
    locale: str
    family: str
    title: PreviewText | None
    subtitle: PreviewText | None
    count: PreviewText | None
    rows: tuple[PreviewRow, ...]
    actions: tuple[PreviewText, ...]
    empty: PreviewText | None
    extra: PreviewText | None  # the edited string, when the card has no slot of its own for it


@dataclass
class _CardTexts:
    """The texts one preview draws from, remembering which keys the card has shown (the rest: `extra`)."""

    key: str
    texts: Mapping[str, tuple[list[str], bool]]
    draft: Sequence[str] | None
    plural: PluralSpec
    used: set[str] = field(default_factory=set)

    def get(self, k: str) -> PreviewText | None:
        if k == self.key and self.draft is not None:
            forms, fallback, edited = list(self.draft), False, True
        elif k in self.texts:
            forms, fallback = self.texts[k]
            edited = k == self.key
        else:
            return None
        self.used.add(k)
        # Plural strings are shown for the sample count, in the form this locale uses for it.
        index = self.plural.index(int(SAMPLE_VALUES["count"])) if len(forms) > 1 else 0
        chosen = forms[min(index, len(forms) - 1)] if forms else ""
        return PreviewText(render(chosen), k, fallback, edited)

    def keys_under(self, prefix: str) -> list[str]:
        """The keys of one part of the card, in the card's order, with the edited key even if it is new."""
        own = [k for k in self.texts if k.startswith(prefix)]
        return own + ([self.key] if self.key not in self.texts and self.key.startswith(prefix) else [])


def build_preview(
    *,
    key: str,
    locale: str,
    texts: Mapping[str, tuple[list[str], bool]],
    draft: Sequence[str] | None = None,
) -> Preview:
    """`texts[key]` = (forms, from a fallback locale) for the keys `preview_prefixes(key)` selected;
    `draft` replaces the edited key's forms (what the translator is typing)."""
    family = family_of(key)
    card = _CardTexts(key, texts, draft, plural_spec(locale))
    rows = _rows(card, family)
    actions = tuple(t for k in card.keys_under(f"{family}.action.") if (t := card.get(k)))
    title = card.get(f"{family}.title")
    subtitle = card.get(f"{family}.subtitle")
    count = card.get(f"{family}.count")
    empty = card.get(f"{family}.empty")
    extra = card.get(key) if key not in card.used else None
    return Preview(locale, family, title, subtitle, count, tuple(rows), actions, empty, extra)


def _rows(card: _CardTexts, family: str) -> list[PreviewRow]:
    """The card's key/value rows: each label with its sample value, or with the status label it shows."""
    short = "hitl" if family == HITL_FAMILY else family.split(".", 1)[1]
    status_fields = {name: (vs, code) for vs, (fam, name, code) in STATUS_FIELDS.items() if fam == family}
    edited_status = value_set_for_key(card.key)
    samples = SAMPLE_FIELDS.get(short, {})
    kv_prefix = f"{family}.kv."
    rows = []
    for k in card.keys_under(kv_prefix):
        field_name = k[len(kv_prefix) :]
        label = card.get(k)
        if label is None:
            continue
        status = None
        value = samples.get(field_name) or SAMPLE_VALUES.get(field_name, "…")
        if field_name in status_fields:
            status = _status_label(card, *status_fields[field_name], edited_status)
            value = ""
        elif family == HITL_FAMILY and field_name in HITL_CODED_FIELDS:
            status = card.get(HITL_CODED_FIELDS[field_name])
            value = "" if status else value
        rows.append(PreviewRow(label, value, status))
    return rows


def _status_label(card: _CardTexts, vs_id: str, code: str, edited_status: tuple[ValueSet, Code] | None) -> PreviewText:
    """The status a row shows: its default code, or the code being edited when it is of this value set."""
    if edited_status and edited_status[0].id == vs_id:
        code = edited_status[1].code
    status_key = value_sets()[vs_id].key_for(code)
    # No label at all: the card would show the raw code, which is exactly what the preview shows.
    return card.get(status_key) or PreviewText(code, status_key, True)
