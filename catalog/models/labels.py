"""The words a person reads for the console's state values, in their language.

The value stays what data, CSS classes and the API carry (`pending-review`); the label is what a page shows
(`{{ value|state_label }}`, catalog.web.templatetags.i18n_text) and what choices display (`get_review_state_display`).
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

STATE_LABELS: dict[str, Promise] = {
    # A revision's review state (catalog.domain.vocabulary.ReviewState).
    "pending-review": gettext_lazy("pending review"),
    "approved": gettext_lazy("approved"),
    "changes-requested": gettext_lazy("changes requested"),
    "superseded": gettext_lazy("superseded"),
    # A tool's change in a revision (ChangeKind) and a tool no longer in the catalog.
    "added": gettext_lazy("added"),
    "removed": gettext_lazy("removed"),
    "changed": gettext_lazy("changed"),
    "retired": gettext_lazy("retired"),
    # A finding's severity.
    "error": gettext_lazy("error"),
    "warning": gettext_lazy("warning"),
    # A declared field's change class (catalog.domain.effect).
    "weakening": gettext_lazy("weakening"),
    "strengthening": gettext_lazy("strengthening"),
}


def state_label(value: object) -> str:
    """The label of a state value; the value itself when it has none (a new state shows, never disappears)."""
    label = STATE_LABELS.get(str(value or ""))
    return str(label) if label is not None else str(value or "")
