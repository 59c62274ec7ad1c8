"""Card strings: the chrome of the cards the read/card tools render, one row per key, its translations per
locale, and the findings of the checks (issue 7).

Written only by the services in `catalog/cards/services/`: the placeholders of a string are derived from its
English, a translation's `ships` flag and the findings from the checks in `catalog/cards/domain/checks.py`.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from catalog.cards.domain.vocabulary import Check, Module, Severity, Slot, State


class UnicodeJSONEncoder(json.JSONEncoder):
    """Stores "Einträge" as written, not as "Eintr\\u00e4ge", so a search for it matches on SQLite too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ensure_ascii"] = False
        super().__init__(*args, **kwargs)


class CardLocale(models.Model):
    """A locale the cards are shown in. `en` is the source; a regional locale (de-AT) falls back to its
    parent (de), every other one to the source."""

    code = models.CharField(max_length=20, unique=True, help_text="BCP 47, e.g. de or de-AT")
    fallback = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    required = models.BooleanField(default=False, help_text="must be complete: a missing text is an error")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return self.code


class CardString(models.Model):
    """One piece of card chrome, keyed as the seam module names it (card.medication.title)."""

    key = models.CharField(max_length=200, unique=True)
    module = models.CharField(max_length=10, choices=[(m.value, m.value) for m in Module])
    source = models.TextField(help_text="the English text (the singular, for a plural string)")
    source_plural = models.TextField(blank=True, default="", help_text="the English plural; empty: not plural")
    note = models.TextField(blank=True, default="", help_text="for translators: where it appears")
    placeholders = models.JSONField(default=list, blank=True, help_text="derived from the English")
    slot = models.CharField(max_length=10, choices=[(s.value, s.value) for s in Slot], default=Slot.LABEL.value)
    max_chars = models.PositiveIntegerField(null=True, blank=True, help_text="overrides the slot's maximum")
    value_set = models.CharField(max_length=60, blank=True, default="", help_text="FHIR value set id it labels")
    code = models.CharField(max_length=60, blank=True, default="", help_text="the code of that value set")
    created_at = models.DateTimeField(default=timezone.now)
    source_changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["key"]
        indexes = [
            models.Index(fields=["module", "key"], name="cardstring_module_idx"),
            models.Index(fields=["value_set", "code"], name="cardstring_valueset_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(module__in=[m.value for m in Module]), name="cardstring_module_valid"),
            models.CheckConstraint(condition=Q(slot__in=[s.value for s in Slot]), name="cardstring_slot_valid"),
            # A status label names both its value set and its code, or neither.
            models.CheckConstraint(
                condition=Q(value_set="", code="") | (~Q(value_set="") & ~Q(code="")),
                name="cardstring_valueset_code_together",
            ),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def plural(self) -> bool:
        return bool(self.source_plural)

    @property
    def source_forms(self) -> list[str]:
        return [self.source, self.source_plural] if self.source_plural else [self.source]


class CardTranslation(models.Model):
    """A string's text in one locale: one form, or as many plural forms as the locale has."""

    string = models.ForeignKey(CardString, on_delete=models.CASCADE, related_name="translations")
    locale = models.ForeignKey(CardLocale, on_delete=models.CASCADE, related_name="translations")
    forms = models.JSONField(default=list, encoder=UnicodeJSONEncoder)
    state = models.CharField(max_length=12, choices=[(s.value, s.value) for s in State])
    same_as_source = models.BooleanField(default=False, help_text="identical to the English on purpose")
    comment = models.TextField(blank=True, default="", help_text="the translator's own comment")
    translated_from = models.JSONField(
        default=list, encoder=UnicodeJSONEncoder, help_text="the English it was made from"
    )
    ships = models.BooleanField(default=False, help_text="derived: goes into the bundles (see cards.domain.ships)")
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(default=timezone.now)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["string_id", "locale_id"]
        indexes = [
            models.Index(fields=["locale", "state"], name="cardtr_locale_state_idx"),
            models.Index(fields=["locale", "ships"], name="cardtr_locale_ships_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["string", "locale"], name="cardtr_one_per_locale"),
            models.CheckConstraint(condition=Q(state__in=[s.value for s in State]), name="cardtr_state_valid"),
            models.CheckConstraint(
                condition=~Q(state=State.REVIEWED.value) | Q(reviewed_at__isnull=False), name="cardtr_reviewed_when"
            ),
            # Only a translated or reviewed text ships (the rule in cards.domain.ships, guarded here too).
            models.CheckConstraint(
                condition=Q(ships=False) | Q(state__in=[State.TRANSLATED.value, State.REVIEWED.value]),
                name="cardtr_ships_only_translated",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.string_id}@{self.locale_id}: {self.state}"

    @property
    def text(self) -> str:
        return self.forms[0] if self.forms else ""


class CardFinding(models.Model):
    """A check a string fails, in one locale (or for the key itself: locale empty). Recomputed whenever the
    string or the translation changes, so the matrix and its filters read them with plain indexed queries."""

    string = models.ForeignKey(CardString, on_delete=models.CASCADE, related_name="findings")
    locale = models.ForeignKey(CardLocale, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    check_name = models.CharField(max_length=20, choices=[(c.value, c.value) for c in Check])
    severity = models.CharField(max_length=10, choices=[(s.value, s.value) for s in Severity])
    message = models.TextField()
    details = models.JSONField(default=dict, blank=True, encoder=UnicodeJSONEncoder)

    class Meta:
        ordering = ["string_id", "locale_id", "check_name"]
        indexes = [
            models.Index(fields=["locale", "check_name"], name="cardfinding_locale_check_idx"),
            models.Index(fields=["check_name", "severity"], name="cardfinding_check_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(check_name__in=[c.value for c in Check]), name="cardfinding_check_valid"
            ),
            models.CheckConstraint(
                condition=Q(severity__in=[s.value for s in Severity]), name="cardfinding_severity_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.check_name} on {self.string_id}@{self.locale_id or '-'}"


class CardsState(models.Model):
    """One row: a version every card-string write bumps in its transaction. Bundles are cached per version,
    so a warm bundle request is a version read and a cache hit; any change makes the next one fresh."""

    singleton = models.BooleanField(default=True, unique=True)
    version = models.PositiveBigIntegerField(default=0)
    changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(singleton=True), name="cardsstate_singleton")]

    def __str__(self) -> str:
        return f"card strings v{self.version}"
