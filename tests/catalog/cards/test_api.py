"""GET /api/v1/cards/{locale}.json: the frontend's bundles, with fallbacks, ETag and 304."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.cards.selectors.exports import bundles_forget
from catalog.cards.services.imports import cards_import
from catalog.cards.services.translations import locale_add, translation_save
from catalog.core.audit import Actor
from catalog.models import CardString

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(make_token: Any) -> Client:
    return Client(headers={"Authorization": f"Bearer {make_token('frontend', scopes=('cards',))}"})


def test_the_german_bundle_has_every_string_with_plurals_as_lists(small: None, api: Client) -> None:
    response = api.get("/api/v1/cards/de.json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["locale"] == "de" and body["fallbacks"] == ["en"]
    assert body["plural"] == {"forms": 2, "expr": "(n != 1)"}
    assert body["strings"]["card.medication.title"] == "Medikation"
    assert body["strings"]["card.medication.count"] == ["{count} aktives Medikament", "{count} aktive Medikamente"]
    assert len(body["strings"]) == 7


def test_a_matching_etag_gets_304_and_a_change_a_new_etag(small: None, api: Client, translator: Any) -> None:
    first = api.get("/api/v1/cards/de.json")
    etag = first["ETag"]
    assert etag.startswith('"') and first["Cache-Control"] == "no-cache"
    again = api.get("/api/v1/cards/de.json", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    translation_save(user=translator, key="card.medication.title", locale="de", forms=["Arzneimittel"])
    changed = api.get("/api/v1/cards/de.json", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert changed.json()["strings"]["card.medication.title"] == "Arzneimittel"


def test_broken_or_fuzzy_translations_fall_back_instead_of_reaching_a_doctor(
    small: None, api: Client, translator: Any
) -> None:
    translation_save(
        user=translator, key="card.medication.warning.interaction", locale="de", forms=["Wechselwirkung mit {x}"]
    )
    strings = api.get("/api/v1/cards/de.json").json()["strings"]
    assert strings["card.medication.warning.interaction"] == "Possible interaction with {drug}"


def test_a_regional_bundle_takes_its_own_then_its_parents_then_english(small: None, api: Client) -> None:
    locale_add(actor=Actor(label="test"), code="de-AT")
    cards_import(files=[("de-AT.json", b'{"status.medicationrequest.on-hold": "Ruhend"}')], actor=Actor(label="t"))
    body = api.get("/api/v1/cards/de_AT.json").json()
    assert body["locale"] == "de-AT" and body["fallbacks"] == ["de", "en"]
    assert body["strings"]["status.medicationrequest.on-hold"] == "Ruhend"
    assert body["strings"]["card.medication.title"] == "Medikation"


def test_tokens_and_locales_are_checked(small: None, api: Client, make_token: Any) -> None:
    assert Client().get("/api/v1/cards/de.json").status_code == 401
    other = Client(headers={"Authorization": f"Bearer {make_token('ci', scopes=('catalog',))}"})
    assert other.get("/api/v1/cards/de.json").status_code == 403
    assert api.get("/api/v1/cards/fr.json").status_code == 404  # known to Babel, not a card locale
    assert api.get("/api/v1/cards/klingon.json").status_code == 404
    assert api.get("/api/v1/cards/en.json").json()["strings"]["card.medication.title"] == "Medications"


def test_never_localize_keys_never_reach_a_bundle(small: None, api: Client) -> None:
    CardString.objects.create(key="rag.medication.keywords", module="base", source="prescribe")
    locale_add(actor=Actor(label="test"), code="fr")  # any write: a new bundle version
    assert "rag.medication.keywords" not in api.get("/api/v1/cards/de.json").json()["strings"]


def test_a_served_bundle_is_kept_in_process_for_its_version_only(
    small: None, api: Client, translator: Any, django_assert_num_queries: Any
) -> None:
    from django.core.cache import cache

    first = api.get("/api/v1/cards/de.json")
    cache.clear()  # the shared cache lost it (a Redis restart): this process still has that version's bytes
    with django_assert_num_queries(2):  # the token (its last use was written just now), the card-strings version
        again = api.get("/api/v1/cards/de.json")
    assert again.content == first.content and again["ETag"] == first["ETag"]
    translation_save(user=translator, key="card.medication.title", locale="de", forms=["Arzneimittel (neu)"])
    changed = api.get("/api/v1/cards/de.json")  # a write is a new version: never the kept bytes
    assert changed["ETag"] != first["ETag"]
    assert changed.json()["strings"]["card.medication.title"] == "Arzneimittel (neu)"


def test_with_the_cache_down_bundles_are_built_from_the_rows_with_the_same_bytes_and_etag(
    small: None, api: Client, cache_down: None, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The cache is only a memo: while Redis is away the frontend still gets its strings, byte for byte, and its
    ETag still answers 304."""
    down = api.get("/api/v1/cards/de.json")
    assert down.status_code == 200 and down.json()["strings"]["card.medication.title"] == "Medikation"
    assert "card bundle cache unavailable, building de from the database" in caplog.text
    assert api.get("/api/v1/cards/de_AT.json").status_code == 404  # not a card locale, as with the cache
    assert api.get("/api/v1/cards/de.json", headers={"If-None-Match": down["ETag"]}).status_code == 304
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "back"}}
    bundles_forget()  # as a fresh process would, with the cache back: built and cached the usual way
    up = api.get("/api/v1/cards/de.json")
    assert up.content == down.content and up["ETag"] == down["ETag"]
    assert up["Cache-Control"] == down["Cache-Control"] == "no-cache"
    bundles_forget()
    assert api.get("/api/v1/cards/de.json").content == down.content  # and now from the cache
