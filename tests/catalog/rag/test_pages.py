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
    assert set(run.by_language) == {"en", "de"} and set(run.figures) == {"fused", "whole", "phrase", "lexical"}
    assert run.revisions == {"condor": 1, "tucan": 1}
    page = response.content.decode()
    assert "recall@5" in page and f"{run.mrr:.3f}" in page
    held_back = run.figures["fused"]["held-back"]
    assert "Held back: never tuned on" in page and f"{held_back['de']['recall_at_1']:.3f}" in page
    assert f"German · {held_back['de']['cases']} cases" in page and "shared words" in page

    reader = signed_in("reader")
    with CaptureQueriesContext(connection) as queries:
        html = reader.get("/rag/quality/").content.decode()
    assert "Run the case set now" not in html and f"{run.recall_at_5:.3f}" in html
    assert html.count('class="trend-run"') == 1 and "condor r1 · tucan r1" in html
    assert len(queries) <= 8  # session, user, groups, runs, the header's approval counts
    assert reader.post("/rag/quality/run").status_code == 403


def stored_run(revisions: dict[str, int], held_back_r1: float | None = None, **fields: Any) -> RetrievalEvaluation:
    """A stored run; without `held_back_r1` one stored before figures per signal and split were recorded."""
    figures: dict[str, Any] = {}
    if held_back_r1 is not None:
        cell = {"cases": 2, "recall_at_1": held_back_r1, "recall_at_5": 0.95, "recall_at_10": 1.0, "mrr": 0.9}
        split = dict.fromkeys(("all", "en", "de"), cell)
        figures = {
            s: {"all": split, "tune": {**split, "all": {**cell, "recall_at_1": 0.61}}, "held-back": split}
            for s in ("fused", "whole", "phrase", "lexical")
        }
    values = {"recall_at_1": 0.515, "recall_at_5": 0.813, "recall_at_10": 0.93, "mrr": 0.649, "in_snapshot": 0.918}
    return RetrievalEvaluation.objects.create(
        run_by="cli",
        model_id="use",
        revisions=revisions,
        cases_file="retrieval_cases.json",
        cases=171,
        by_language={"en": {"cases": 84, "recall_at_5": 0.83, "mrr": 0.69}},
        figures=figures,
        failures=[],
        **{**values, **fields},
    )


def test_the_quality_page_before_any_run_says_how_to_start_one(client: Client, make_user: Any) -> None:
    make_user("reader")
    client.login(username="reader", password="pw-reader")
    html = client.get("/rag/quality/").content.decode()
    assert "<svg" not in html and "No run yet" in html


def test_old_and_new_runs_share_the_chart_and_the_table(client: Client, make_user: Any) -> None:
    stored_run({"condor": 1, "tucan": 1}, recall_at_1=0.401)  # before this change: figures {}
    stored_run({"condor": 2, "tucan": 1}, held_back_r1=0.733)
    stored_run({"condor": 3, "tucan": 1}, held_back_r1=0.867)
    make_user("reader")
    client.login(username="reader", password="pw-reader")
    html = client.get("/rag/quality/").content.decode()
    chart = html[html.index("<svg") : html.index("</svg>")]
    assert chart.count('class="trend-run"') == 3  # one slot per run, oldest first
    assert chart.count('<circle class="s0"') == 2  # the old run has no held-back figure to draw
    labels = chart[chart.index('class="trend-labels"') :]
    assert labels.index(">condor r1<") < labels.index(">condor r2<") < labels.index(">condor r3<")
    assert "<title" in chart and "<desc" in chart and 'viewBox="0 0 320.0' in chart
    assert "held back recall@1 0.867" in chart and "tune recall@1 0.610" in chart
    runs = html[html.index("<h2>Runs per catalog revision") :]
    assert "0.401" in runs and "0.733" in runs and "—" in runs  # the old run keeps its columns, dashes for the new
    assert "Held back: never tuned on" in html and "0.867" in html[: html.index("<h2>Runs per catalog revision")]


def test_a_latest_run_stored_before_figures_shows_dashes(client: Client, make_user: Any) -> None:
    stored_run({"condor": 1, "tucan": 1})
    make_user("cadmin", "catalog-admin")
    client.login(username="cadmin", password="pw-cadmin")
    html = client.get("/rag/quality/").content.decode()
    assert html.count('class="trend-run"') == 1 and "<circle" not in html
    latest = html[html.index("Latest run") : html.index("<h2>Runs per catalog revision")]
    assert latest.count('<td class="num">—</td>') == 4 * 4 * 4  # 4 tables × 4 signals × 4 figures
    assert "stored before figures per signal" in latest and "Run the case set now" in html


def test_the_dashboard_counts_embedded_stale_and_missing(signed_in: Any) -> None:
    ToolEmbedding.objects.filter(tool__declared_id="listVitals").delete()
    html = signed_in("oncall", "on-call").get("/").content.decode()
    assert "Embeddings" in html and "430" in html  # 431 demo tools, one missing
