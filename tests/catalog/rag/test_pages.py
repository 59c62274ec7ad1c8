"""The playground and the retrieval-quality page, as the people who use them see them."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.models import RetrievalEvaluation, ToolEmbedding


@pytest.fixture
def signed_in(client: Client, make_user: Any, demo_embedded: None) -> Any:
    def as_(username: str, *groups: str) -> Client:
        make_user(username, *groups)
        client.login(username=username, password="pw-" + username)
        return client

    return as_


def test_the_playground_shows_the_snapshot_and_answers_why_not(signed_in: Any) -> None:
    client = signed_in("oncall", "on-call")
    response = client.get(
        "/rag/",
        {
            "prompt": "Blutdruck und Puls eintragen",
            "profile": "clinical-production",
            "attachments": "on",
            "why_not": "createInvoiceDraft",
        },
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "record.vitals" in html and "forced-floor:attachments-floor" in html and "cs_" in html
    assert "createInvoiceDraft ranked" in html
    partial = client.get("/rag/", {"prompt": "Termin buchen", "profile": "clinical-production"}, HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content and b"book.appointment" in partial.content


def test_the_playground_says_what_is_wrong_with_a_bad_request(signed_in: Any) -> None:
    client = signed_in("oncall", "on-call")
    response = client.get("/rag/", {"prompt": "x", "profile": "clinical-production", "top_k": "500"})
    assert response.status_code == 200
    assert "Ensure this value is less than or equal to 50" in response.content.decode()


def test_a_catalog_admin_runs_the_case_set_and_everyone_reads_it(signed_in: Any, client: Client) -> None:
    admin = signed_in("cadmin", "catalog-admin")
    response = admin.post("/rag/quality/run", follow=True)
    assert response.status_code == 200
    run = RetrievalEvaluation.objects.get()
    assert run.cases >= 100 and 0 < run.recall_at_10 <= 1 and run.run_by == "user:cadmin"
    assert set(run.by_language) == {"en", "de"}
    assert run.revisions == {"condor": 1, "tucan": 1}
    page = response.content.decode()
    assert "recall@5" in page and f"{run.mrr:.3f}" in page

    reader = signed_in("reader")
    with CaptureQueriesContext(connection) as queries:
        html = reader.get("/rag/quality/").content.decode()
    assert "Run the case set now" not in html and f"{run.recall_at_5:.3f}" in html
    assert len(queries) <= 8  # session, user, groups, runs, the header's approval counts
    assert reader.post("/rag/quality/run").status_code == 403


def test_the_dashboard_counts_embedded_stale_and_missing(signed_in: Any) -> None:
    ToolEmbedding.objects.filter(tool__declared_id="listVitals").delete()
    html = signed_in("oncall", "on-call").get("/").content.decode()
    assert "Embeddings" in html and "430" in html  # 431 demo tools, one missing
