"""Words people read for the approvals' stored values (states, tiers, dispatch modes): the value stays the API's,
the label is translated. Templates use the `request_state_label` / `tier_label` filters (approvals_tags; the
catalog's `state_label` is another filter, in i18n_text); the dashboard's approval charts (approval_charts) use them
too. A page-side module (the boundary layer)."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

STATE_LABELS: dict[str, Promise] = {
    "pending": _("pending"),
    "approved": _("approved"),
    "rejected": _("rejected"),
    "expired": _("expired"),
    "cancelled": _("cancelled"),
    "consumed": _("consumed"),
}

TIER_LABELS: dict[str, Promise] = {"high": _("high"), "low": _("low"), "ungated": _("ungated")}

DISPATCH_LABELS: dict[str, Promise] = {
    "operator": _("operator"),
    "supervised": _("supervised"),
    "ambient": _("ambient"),
}


def label(labels: dict[str, Promise], value: str) -> str:
    """The translated word, or the value itself when there is none (a new state must still show)."""
    found = labels.get(value)
    return str(found) if found is not None else value
