"""manage.py cards_locales: list the locales with their completion, add one."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.models import AuditEvent, CardLocale

pytestmark = pytest.mark.django_db


def test_locales_are_listed_with_their_plural_forms_and_completion(small: None) -> None:
    out = io.StringIO()
    call_command("cards_locales", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("en") and "source" in lines[0]
    assert lines[1].startswith("de") and "required" in lines[1] and "7/7 translated, 1 reviewed" in lines[1]


def test_a_locale_is_added_with_its_fallback_and_audited(small: None) -> None:
    out = io.StringIO()
    call_command("cards_locales", "--add", "de_CH", stdout=out)
    assert "added de-CH (falls back to de)" in out.getvalue()
    assert any(line.startswith("de-CH") and "→ de" in line for line in out.getvalue().splitlines())
    assert CardLocale.objects.get(code="de-CH").fallback.code == "de"
    assert AuditEvent.objects.filter(action="cards.locale.added", object_id="de-CH").exists()
    with pytest.raises(CommandError, match="unknown to Babel"):
        call_command("cards_locales", "--add", "qq")
