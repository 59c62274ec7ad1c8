"""Every card-string page and API read runs a bounded number of queries, at 30 and at 600 strings."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from catalog.cards.services.imports import cards_import
from catalog.cards.services.translations import locale_add
from catalog.core.audit import Actor

from .conftest import catalog, entry

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def many(n: int) -> None:
    actor = Actor(label="test")
    template, german = [], []
    for i in range(n):
        card = f"card.c{i // 10}"
        if i % 10 == 0:
            template.append(entry(f"{card}.title", f"Card {i}", slot="title"))
            german.append(entry(f"{card}.title", f"Card {i}", forms=[f"Karte {i}"], flags=("reviewed",)))
        elif i % 10 == 1:
            template.append(entry(f"{card}.count", "{count} row", "{count} rows", slot="hint"))
            german.append(entry(f"{card}.count", "{count} row", "{count} rows", forms=["{count} Zeile", ""]))
        else:
            template.append(entry(f"{card}.kv.f{i}", f"Field {i} of {{name}}"))
            if i % 7:
                german.append(entry(f"{card}.kv.f{i}", f"Field {i} of {{name}}", forms=[f"Feld {i} von {{name}}"]))
    template.append(
        entry("status.medicationrequest.active", "Active", module="status", fhir="medicationrequest-status#active")
    )
    cards_import(files=[("cards.pot", catalog(*template)), ("de.po", catalog(*german, language="de"))], actor=actor)
    locale_add(actor=actor, code="de-AT")
    locale_add(actor=actor, code="pl")


# Measured after a first request: the session, the user, their language and groups are then known, as in a
# browsing session. Full pages include base.html's header (its context processors' queries: one today), and
# allow one more for it; the workspace's own reads are the rest.
PAGES = {
    "/cards/": 12,
    "/cards/?check=any&locale=de&page=2": 12,
    "/cards/?q=Feld&state=translated&locale=de&module=base": 12,
    "/cards/?key=card.c1.count&lang=de": 17,
    "/cards/coverage/": 7,
}
PARTIALS = {
    "/cards/?module=base": 10,
    "/cards/panel?key=card.c2.kv.f23&lang=de-AT": 9,
    "/cards/panel?key=card.c2.kv.f23&lang=de&part=checks&form=Feld%20{x}": 9,
}


@pytest.mark.parametrize("n", [30, 600])
def test_workspace_pages_run_a_fixed_number_of_queries(
    n: int, make_user: Any, django_assert_max_num_queries: Any
) -> None:
    many(n)
    client = Client()
    client.force_login(make_user("tina", "translator"))
    client.get("/cards/coverage/")
    for url, limit in PAGES.items():
        with django_assert_max_num_queries(limit):
            assert client.get(url).status_code == 200, url
    for url, limit in PARTIALS.items():
        with django_assert_max_num_queries(limit):
            assert client.get(url, headers=HTMX).status_code == 200, url


@pytest.mark.parametrize("n", [30, 600])
def test_a_bundle_is_a_few_queries_cold_and_two_warm(
    n: int, make_token: Any, django_assert_max_num_queries: Any
) -> None:
    many(n)
    cache.clear()
    api = Client(headers={"Authorization": f"Bearer {make_token('fe', scopes=('cards',))}"})
    with django_assert_max_num_queries(6):  # token, its last-use stamp, version, locales, strings, translations
        assert api.get("/api/v1/cards/de-AT.json").status_code == 200
    with django_assert_max_num_queries(3):  # token, its last-use stamp, version: the rest is the cache
        assert api.get("/api/v1/cards/de-AT.json").status_code == 200
