"""A manifest above CONDOR_ASYNC_IMPORT_BYTES: 202 at once, a worker imports it, the status URL tells how it went."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from catalog.models import CatalogRevision, ImportJob, Tool
from catalog.services.import_jobs import import_job_run
from tests.conftest import tasks_in_process

pytestmark = pytest.mark.django_db
URL = "/api/v1/catalog/revisions"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def large(settings: Any) -> Iterator[None]:
    settings.CONDOR_ASYNC_IMPORT_BYTES = 100  # every test manifest is "large"
    with tasks_in_process():  # the worker's task runs here, with REDIS_URL set too (tests/test_worker.py: the real one)
        yield


def test_a_large_manifest_is_answered_at_once_and_imported_by_the_worker(
    client: Client, manifests: Any, make_token: Any, large: None, django_capture_on_commit_callbacks: Any
) -> None:
    token = make_token("ci-export")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(
            URL, data=manifests.encode(manifests.condor()), content_type="application/json", headers=auth(token)
        )
    assert response.status_code == 202, response.content
    accepted = response.json()
    assert accepted["state"] == "queued" and accepted["result"] is None
    assert accepted["status_url"] == f"/api/v1/catalog/imports/{accepted['job']}"
    assert Tool.objects.count() == 0  # nothing imported before the worker runs

    waiting = client.get(accepted["status_url"], headers=auth(token)).json()
    assert (waiting["state"], waiting["phase"]) == ("queued", "waiting for a worker")

    for callback in queued:  # what the commit hands the (eager) worker
        callback()
    with django_capture_on_commit_callbacks(execute=False):
        done = client.get(accepted["status_url"], headers=auth(token))
    body = done.json()
    assert done.status_code == 200 and body["state"] == "done" and body["finished_at"]
    assert body["result"]["revision"]["number"] == 1
    assert body["result"]["revision"]["imported_via"] == "api token ci-export"
    assert sorted(body["result"]["added"]) == ["listActiveMedications", "prescribeMedication"]
    assert CatalogRevision.objects.get().imported_by.username == "token-issuer"
    assert bytes(ImportJob.objects.get().manifest) == b""  # not kept once imported


def test_a_refused_large_manifest_lists_its_problems_on_the_status_url(
    client: Client, manifests: Any, make_token: Any, large: None, django_capture_on_commit_callbacks: Any
) -> None:
    token = make_token()
    bad = manifests.condor([manifests.mutate_tool("prescribeMedication", hitlTier=None)], forcedFloors=[])
    with django_capture_on_commit_callbacks(execute=True):
        accepted = client.post(URL, data=manifests.encode(bad), content_type="application/json", headers=auth(token))
    body = client.get(accepted.json()["status_url"], headers=auth(token)).json()
    assert (body["state"], body["phase"], body["result"]) == ("failed", "refused", None)
    assert body["errors"] == ["tools[0].hitlTier: required when policyClass is mutate (tool prescribeMedication)"]
    assert Tool.objects.count() == 0 and CatalogRevision.objects.count() == 0


def test_a_redelivered_job_imports_once(
    client: Client, manifests: Any, make_token: Any, large: None, django_capture_on_commit_callbacks: Any
) -> None:
    token = make_token()
    with django_capture_on_commit_callbacks(execute=True):
        job_id = client.post(
            URL, data=manifests.encode(manifests.condor()), content_type="application/json", headers=auth(token)
        ).json()["job"]
    assert import_job_run(job_id) is None
    assert CatalogRevision.objects.count() == 1


def test_the_status_url_needs_the_import_scope_and_a_job_that_exists(
    client: Client, manifests: Any, make_token: Any, large: None, django_capture_on_commit_callbacks: Any
) -> None:
    writer = make_token("writer")
    with django_capture_on_commit_callbacks(execute=True):
        url = client.post(
            URL, data=manifests.encode(manifests.condor()), content_type="application/json", headers=auth(writer)
        ).json()["status_url"]
    assert client.get(url, headers=auth(make_token("reader", scopes=("catalog:read",)))).status_code == 403
    assert client.get(url).status_code == 401
    missing = client.get("/api/v1/catalog/imports/999999", headers=auth(writer))
    assert missing.status_code == 404 and missing.json()["detail"]


def test_reading_a_job_costs_a_fixed_number_of_queries(
    client: Client,
    manifests: Any,
    make_token: Any,
    large: None,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    token = make_token()
    with django_capture_on_commit_callbacks(execute=True):
        url = client.post(
            URL, data=manifests.encode(manifests.condor()), content_type="application/json", headers=auth(token)
        ).json()["status_url"]
    with django_assert_max_num_queries(4):  # the token, its last use, the job with its revision
        assert client.get(url, headers=auth(token)).json()["state"] == "done"


def test_a_small_manifest_is_still_imported_in_the_request(client: Client, manifests: Any, make_token: Any) -> None:
    response = client.post(
        URL, data=manifests.encode(manifests.condor()), content_type="application/json", headers=auth(make_token())
    )
    assert response.status_code == 201 and response.json()["revision"]["number"] == 1
    assert ImportJob.objects.count() == 0
