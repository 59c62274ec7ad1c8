"""The playground's "why not" and the quality page's failure sentences in German; the API's whyNot stays English."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.models import RetrievalEvaluation


@pytest.fixture
def demo_embedded(shared_demo_embedded: None) -> None:
    """The demo, imported and embedded once for the module (tests/catalog/rag/conftest.py)."""


def test_the_playground_answers_why_not_in_german(client: Client, make_user: Any, demo_embedded: None) -> None:
    make_user("oncall", "on-call")
    client.login(username="oncall", password="pw-oncall")
    query = {"prompt": "Blutdruck eintragen", "profile": "clinical-production", "top_k": "2"}
    html = client.get("/rag/", {**query, "why_not": "createInvoiceDraft"}, headers={"Accept-Language": "de"})
    text = html.content.decode()
    assert "createInvoiceDraft steht auf Rang" in text and "unterhalb der besten 2" in text
    assert "ganzer Text" in text and "ranked" not in text
    other = client.get("/rag/", {**query, "why_not": "resolveReferent"}, headers={"Accept-Language": "de"})
    assert "Nur Business-Tools sind Kandidaten" in other.content.decode()
    english = client.get("/rag/", {**query, "why_not": "createInvoiceDraft"}, headers={"Accept-Language": "en"})
    assert "createInvoiceDraft ranked" in english.content.decode()


def test_the_quality_page_shows_why_a_case_failed_in_german(
    client: Client, make_user: Any, demo_embedded: None
) -> None:
    make_user("cadmin", "catalog-admin")
    client.login(username="cadmin", password="pw-cadmin")
    client.post("/rag/quality/run")
    failures = RetrievalEvaluation.objects.get().failures
    assert failures and all(len(f["why"]) == len(f["why_text"]) for f in failures)
    german = client.get("/rag/quality/", headers={"Accept-Language": "de"}).content.decode()
    english = client.get("/rag/quality/", headers={"Accept-Language": "en"}).content.decode()
    shown = [w for f in failures[:20] for w in f["why"]]
    assert any(w in english for w in shown)
    assert not any(w in german for w in shown if " ranked " in w or " is not " in w)
    assert "steht auf Rang" in german or "ist unter dem Profil" in german or "kann nicht gefunden" in german
