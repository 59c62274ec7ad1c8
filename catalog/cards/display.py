"""What people read about card strings, in the console's language: state and check names, and each finding
as a sentence. The stored finding message is English (API, CLI, audit); the console renders these instead."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from catalog.cards.domain.checks import FindingData
from catalog.cards.domain.vocabulary import Check, Module, Severity, Slot, State
from catalog.models import CardFinding

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

# Keyed by the enums' members, looked up by the plain strings stored in the rows (a StrEnum member is one).
STATE_LABELS: dict[str, StrPromise] = {
    State.UNTRANSLATED: gettext_lazy("untranslated"),
    State.FUZZY: gettext_lazy("fuzzy"),
    State.TRANSLATED: gettext_lazy("translated"),
    State.REVIEWED: gettext_lazy("reviewed"),
}
CHECK_LABELS: dict[str, StrPromise] = {
    Check.MISSING: gettext_lazy("missing"),
    Check.PLACEHOLDER: gettext_lazy("placeholder"),
    Check.PLURAL_FORMS: gettext_lazy("plural forms"),
    Check.MARKUP: gettext_lazy("markup"),
    Check.SAME_AS_SOURCE: gettext_lazy("same as English"),
    Check.NEVER_LOCALIZE: gettext_lazy("never localize"),
    Check.TOO_LONG: gettext_lazy("too long"),
}
SLOT_LABELS: dict[str, StrPromise] = {
    Slot.TITLE: gettext_lazy("title"),
    Slot.LABEL: gettext_lazy("key/value label"),
    Slot.STATUS: gettext_lazy("status badge"),
    Slot.SEVERITY: gettext_lazy("severity badge"),
    Slot.ACTION: gettext_lazy("action"),
    Slot.EMPTY: gettext_lazy("empty state"),
    Slot.MESSAGE: gettext_lazy("message"),
    Slot.HINT: gettext_lazy("hint"),
}
MODULES = [m.value for m in Module]


@dataclass(frozen=True)
class ShownFinding:
    check: str
    severity: str
    label: str
    text: str


def _braces(names: Iterable[Any]) -> str:
    return ", ".join("{" + str(n) + "}" for n in names)


def finding_text(check: str, details: Mapping[str, Any], message: str) -> str:
    d = details or {}
    if check == Check.MISSING:
        return _("No translation yet.")
    if check == Check.PLACEHOLDER:
        parts = [
            _("%(old)s renamed to %(new)s") % {"old": _braces([o]), "new": _braces([n])}
            for o, n in d.get("renamed", [])
        ]
        parts += [_("%(name)s is missing") % {"name": _braces([n])} for n in d.get("missing", [])]
        parts += [_("%(name)s is not in the English") % {"name": _braces([n])} for n in d.get("extra", [])]
        return (
            "; ".join(parts) + " " + _("(the English has %(names)s)") % {"names": _braces(d.get("expected", [])) or "—"}
        )
    if check == Check.PLURAL_FORMS:
        labels = "; ".join(d.get("labels", []))
        if d.get("got") != d.get("expected"):
            return _("This language has %(expected)s plural forms (%(labels)s); the translation has %(got)s.") % {
                "expected": d.get("expected"),
                "labels": labels,
                "got": d.get("got"),
            }
        forms = ", ".join(str(i + 1) for i in d.get("empty", []))
        return _("Plural form %(forms)s is empty; all %(expected)s are needed (%(labels)s).") % {
            "forms": forms,
            "expected": d.get("expected"),
            "labels": labels,
        }
    if check == Check.MARKUP:
        parts = []
        if d.get("missing"):
            parts.append(_("missing %(tags)s") % {"tags": " ".join(d["missing"])})
        if d.get("extra"):
            parts.append(_("not in the English: %(tags)s") % {"tags": " ".join(d["extra"])})
        return _("The markup differs from the English: %(diff)s.") % {"diff": "; ".join(parts)}
    if check == Check.SAME_AS_SOURCE:
        return _("Identical to the English: translate it, or mark it “same as source” if that is right.")
    if check == Check.NEVER_LOCALIZE:
        return _("This key is in a never-localize namespace (%(reason)s).") % {"reason": d.get("reason", "")}
    if check == Check.TOO_LONG:
        return _("%(length)s characters as rendered; the %(slot)s slot holds %(max)s.") % {
            "length": d.get("length"),
            "slot": SLOT_LABELS.get(d.get("slot", ""), d.get("slot", "")),
            "max": d.get("max"),
        }
    return message


def shown(findings: Iterable[CardFinding | FindingData]) -> list[ShownFinding]:
    """Errors first, then warnings."""
    result = []
    for f in findings:
        check = f.check_name if isinstance(f, CardFinding) else f.check.value
        severity = str(f.severity)
        result.append(
            ShownFinding(
                check, severity, str(CHECK_LABELS.get(check, check)), finding_text(check, f.details, f.message)
            )
        )
    return sorted(result, key=lambda s: (s.severity != Severity.ERROR, s.check))


def state_label(state: str) -> str:
    return str(STATE_LABELS.get(state, state))
