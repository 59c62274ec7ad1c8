"""A large manifest through the API as an importer sends it, imported by a real Celery worker on a real Redis broker
and the same PostgreSQL database: 202 at once, the status URL moves from queued to done, the catalog is there.

tests/catalog/api/test_import_jobs.py runs the job's task in process; this one leaves it to the worker process
operators start, so the hand-over (commit, broker, worker, status written outside the import's transaction) is real.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection
from django.test import Client

from catalog.models import CatalogRevision, ImportJob, Tool
from tests.conftest import requires_postgres

ROOT = Path(__file__).resolve().parents[3]
CELERY = [sys.executable, "-m", "celery", "-A", "condor_admin", "worker", "--pool=solo", "--loglevel=info"]
URL = "/api/v1/catalog/revisions"
pytestmark = [
    requires_postgres,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs a real Redis: set REDIS_URL (CI does)"),
    pytest.mark.django_db(transaction=True),  # committed rows: the worker reads them from its own connection
]


def this_test_database_url() -> str:
    """DATABASE_URL pointing at the test database this process is using (pytest-django's `test_…`)."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + str(connection.settings_dict["NAME"])))


def start_worker(tmp_path: Path, name: str) -> tuple[subprocess.Popen[bytes], Path]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DATABASE_URL=this_test_database_url(), CONDOR_ACTIVE_PROFILE="")
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:  # a file: a pipe nobody reads blocks the worker once full
        worker = subprocess.Popen(
            [*CELERY, "-n", name],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return worker, log_path


def stop_worker(worker: subprocess.Popen[bytes], log_path: Path) -> None:
    worker.terminate()
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait(timeout=10)
        pytest.fail("the worker did not stop within 30 s:\n" + log_path.read_text(errors="replace")[-3000:])


def test_a_large_manifest_is_answered_202_and_imported_by_the_worker_process(
    client: Client, manifests: Any, make_token: Any, settings: Any, tmp_path: Path
) -> None:
    from condor_admin.celery import app

    settings.CONDOR_ASYNC_IMPORT_BYTES = 100  # the demo-sized manifest counts as large
    app.control.purge()  # what earlier tests left queued on the suite's broker is not this worker's to run
    token = make_token("ci-export")
    auth = {"Authorization": f"Bearer {token}"}
    raw = manifests.encode(manifests.condor())
    accepted = client.post(URL, data=raw, content_type="application/json", headers=auth)
    assert accepted.status_code == 202, accepted.content
    status_url = accepted.json()["status_url"]
    # No worker yet: the job waits, and nothing is imported.
    first = client.get(status_url, headers=auth).json()
    assert (first["state"], first["phase"]) == ("queued", "waiting for a worker")
    assert not Tool.objects.exists()

    worker, log_path = start_worker(tmp_path, f"import-{os.getpid()}@%h")
    try:
        deadline = time.monotonic() + 120
        body = first
        while body["state"] in ("queued", "running") and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.5)
            body = client.get(status_url, headers=auth).json()
    finally:
        stop_worker(worker, log_path)
    log = log_path.read_text(errors="replace")
    assert body["state"] == "done", (body, log[-3000:])
    assert body["result"]["revision"]["number"] == 1
    assert sorted(body["result"]["added"]) == ["listActiveMedications", "prescribeMedication"]
    assert sorted(Tool.objects.values_list("declared_id", flat=True)) == sorted(body["result"]["added"])
    assert CatalogRevision.objects.get().imported_via == "api token ci-export"
    job = ImportJob.objects.get()
    assert job.state == ImportJob.State.DONE and bytes(job.manifest) == b""
    assert "catalog.tasks.run_import_job" in log and "succeeded" in log
