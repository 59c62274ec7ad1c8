"""`Cache-Control: no-store, private` on what carries patient references: no browser cache, back button or proxy
keeps an approval page or an approvals API answer. Views that choose their own caching keep it."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from .conftest import PATIENT, Runtime

pytestmark = pytest.mark.django_db
NO_STORE = "no-store, private"


def test_approval_pages_with_patient_references_are_never_stored(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend()
    client = Client()
    client.force_login(approver)
    for url in ("/approvals/", f"/approvals/{req['id']}/", "/approvals/history/", "/approvals/counts", "/catalog/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Cache-Control"] == NO_STORE, url
    assert PATIENT in client.get(f"/approvals/{req['id']}/").content.decode()  # what is kept out of caches
    fragment = client.get("/approvals/", headers={"HX-Request": "true", "X-Condor-Poll": "true"})
    assert fragment["Cache-Control"] == NO_STORE


def test_approvals_api_answers_are_never_stored(runtime: Runtime) -> None:
    evaluated = runtime.evaluate()
    assert evaluated.status_code == 201 and evaluated["Cache-Control"] == NO_STORE
    request_id = evaluated.json()["request"]["id"]
    fetched = runtime.get(request_id)
    assert fetched.json()["patientRef"] == PATIENT and fetched["Cache-Control"] == NO_STORE
    assert runtime.get("6b1f3c2e-0000-4000-8000-000000000000")["Cache-Control"] == NO_STORE  # a 404 too
    assert Client().get(f"/api/v1/approvals/{request_id}")["Cache-Control"] == NO_STORE  # and a 401


def test_views_that_choose_their_own_caching_keep_it(make_token: Any, make_user: Any) -> None:
    # The card bundles: revalidated every time against their ETag (no patient data), and their 304 says nothing
    # new (a 304 updates the cached answer's headers; no-store there would throw the bundle away).
    api = Client(headers={"Authorization": f"Bearer {make_token('frontend', scopes=('cards',))}"})
    bundle = api.get("/api/v1/cards/en.json")
    assert bundle.status_code == 200 and bundle["Cache-Control"] == "no-cache"
    again = api.get("/api/v1/cards/en.json", headers={"If-None-Match": bundle["ETag"]})
    assert again.status_code == 304 and "Cache-Control" not in again
    # Django's never_cache (the sign-in page, the admin) and static files (WhiteNoise: long-lived) keep theirs.
    assert "must-revalidate" in Client().get("/login/")["Cache-Control"]
    static = Client().get("/static/django_htmx/htmx-2.min.js")
    assert static.status_code == 200 and "no-store" not in static.get("Cache-Control", "")
