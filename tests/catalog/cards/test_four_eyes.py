"""Four eyes in the translator's workspace: a reviewer is never offered "Mark reviewed" on their own
translation, the panel says why, and the server refuses it with a reason a person can read (issue 23, item 6)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.cards.services.translations import translation_save
from catalog.models import CardTranslation

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
KEY = "status.medicationrequest.on-hold"
PANEL = f"/cards/panel?key={KEY}&lang=de"


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_mark_reviewed_is_not_offered_on_ones_own_translation(small: None, reviewer: Any) -> None:
    translation_save(user=reviewer, key=KEY, locale="de", forms=["Angehalten"])
    html = client_for(reviewer).get(PANEL, headers=HTMX).content.decode()
    assert "Mark reviewed" not in html and 'action="/cards/review"' not in html
    assert 'id="cards-own-translation"' in html and "another reviewer" in html


def test_another_reviewer_is_offered_it(small: None, reviewer: Any, make_user: Any) -> None:
    translation_save(user=reviewer, key=KEY, locale="de", forms=["Angehalten"])
    second = make_user("rita", "translator", "translator-reviewer")
    html = client_for(second).get(PANEL, headers=HTMX).content.decode()
    assert "Mark reviewed" in html and 'id="cards-own-translation"' not in html


def test_a_forced_review_of_ones_own_translation_is_refused_with_the_reason(small: None, reviewer: Any) -> None:
    translation_save(user=reviewer, key=KEY, locale="de", forms=["Angehalten"])
    response = client_for(reviewer).post("/cards/review", {"key": KEY, "lang": "de"}, headers=HTMX)
    assert response.status_code == 403
    assert "another reviewer must review it" in response.content.decode()
    assert CardTranslation.objects.get(string__key=KEY, locale__code="de").state == "translated"
