"""Two people at the same moment, on real PostgreSQL with real connections."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections

from catalog.cards.services.imports import cards_import
from catalog.cards.services.translations import CardsRefused, translation_review, translation_save
from catalog.core.audit import Actor, audit_verify
from catalog.models import AuditEvent, CardTranslation
from tests.catalog.cards.conftest import GERMAN, TEMPLATE, catalog
from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            results[i] = calls[i]()
        except Exception as exc:  # reported by the assertions
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


@pytest.fixture
def strings(transactional_db: Any) -> None:
    cards_import(
        files=[("cards.pot", catalog(*TEMPLATE)), ("de.po", catalog(*GERMAN[:2], language="de"))],
        actor=Actor(label="t"),
    )


def test_two_translators_saving_a_first_text_at_once_both_land_in_turn(strings: None, make_user: Any) -> None:
    tina, tom = make_user("tina", "translator"), make_user("tom", "translator")
    key = "status.medicationrequest.on-hold"
    results = at_once(
        lambda: translation_save(user=tina, key=key, locale="de", forms=["Pausiert"]),
        lambda: translation_save(user=tom, key=key, locale="de", forms=["Angehalten"]),
    )
    assert not any(isinstance(r, Exception) for r in results), results
    assert CardTranslation.objects.filter(string__key=key, locale__code="de").count() == 1
    assert AuditEvent.objects.filter(action="cards.translation.saved").count() == 2
    assert audit_verify().ok


def test_two_reviewers_at_once_review_exactly_once(strings: None, make_user: Any) -> None:
    tina = make_user("tina", "translator")
    ria, rob = make_user("ria", "translator-reviewer"), make_user("rob", "translator-reviewer")
    translation_save(
        user=tina, key="card.medication.count", locale="de", forms=["{count} Medikament", "{count} Medikamente"]
    )
    results = at_once(
        lambda: translation_review(user=ria, key="card.medication.count", locale="de"),
        lambda: translation_review(user=rob, key="card.medication.count", locale="de"),
    )
    refused = [r for r in results if isinstance(r, CardsRefused)]
    assert len(refused) == 1 and "already reviewed" in refused[0].message, results
    assert AuditEvent.objects.filter(action="cards.translation.reviewed").count() == 1
