"""A real Celery worker with its beat, against a real Redis, expires an overdue request."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.shared_data import SqliteFiles
from tests.test_worker import ROOT, service_env

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs a real Redis: set REDIS_URL (CI does)")

SUSPEND_OVERDUE = """
from datetime import timedelta
from django.utils import timezone
from approvals.models import ApprovalRequest
from approvals.services import approval_evaluate
result = approval_evaluate(tool_name="prescribeMedication", profile="clinical-production", dispatch_mode="ambient",
    run_id="run-beat", requested_by="dr.house", patient_ref="p-1", args={"drug": "x"}, idempotency_key="beat-1",
    via="beat-test")
ApprovalRequest.objects.filter(pk=result.request.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
print(result.request.pk)
"""


def private_redis_db(url: str) -> str:
    """The same Redis server, another database: messages left by other tests are not ours to run."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/11"))


def test_the_beat_expires_an_overdue_request_through_a_real_worker(tmp_path: Path, sqlite_files: SqliteFiles) -> None:
    broker = private_redis_db(os.environ["REDIS_URL"])
    env = service_env(tmp_path, REDIS_URL=broker, APPROVALS_EXPIRE_EVERY_SECONDS="1")
    sqlite_files.demo(tmp_path / "worker.sqlite3")  # what `migrate` and `load_demo` leave, vectors embedded
    # Created with no broker (tasks in-process), so only the beat can expire it.
    created = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SUSPEND_OVERDUE],
        cwd=ROOT,
        env={**env, "REDIS_URL": ""},
        check=True,
        capture_output=True,
        text=True,
    )
    request_id = created.stdout.strip().splitlines()[-1].replace("-", "")
    database = tmp_path / "worker.sqlite3"

    def state() -> str:
        with sqlite3.connect(database) as db:
            row = db.execute("SELECT state FROM approvals_approvalrequest WHERE id = ?", (request_id,)).fetchone()
        return row[0]

    assert state() == "pending"  # stored as pending; only reads treat it as expired
    log = tmp_path / "worker.log"
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "condor_admin",
            "worker",
            "--beat",
            "--pool=solo",
            "--loglevel=info",
            "-n",
            f"beat-{os.getpid()}@%h",
            "-s",
            str(tmp_path / "beat-schedule"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while state() != "expired" and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.5)
        assert state() == "expired", log.read_text()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    output = log.read_text()
    assert "approvals.tasks.expire_overdue" in output
    with sqlite3.connect(database) as db:
        actions = [
            r[0] for r in db.execute("SELECT action FROM catalog_auditevent WHERE object_type = 'approvals.request'")
        ]
    assert actions == ["approvals.request.suspended", "approvals.request.expired"]
