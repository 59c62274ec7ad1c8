"""A real Celery worker and beat, on Redis and PostgreSQL: it embeds an import, survives `kill -9` mid-batch
(the sweep re-queues what the lost messages carried), and never duplicates a vector row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection
from django.db.models import Count, F
from django.test import Client

from catalog.models import Tool, ToolEmbedding
from catalog.rag.selectors.vectors import embedding_status
from tests.conftest import requires_postgres
from tests.test_worker import ROOT

pytestmark = [
    requires_postgres,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs a real Redis: set REDIS_URL (CI does)"),
]


def database_url() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def private_broker() -> str:
    """Same Redis server, a database of its own, emptied: no other test's messages."""
    import redis

    url = urlsplit(os.environ["REDIS_URL"])._replace(path="/12")
    broker = urlunsplit(url)
    redis.Redis.from_url(broker).flushdb()
    return broker


def start_worker(env: dict[str, str], log: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "celery", "-A", "condor_admin", "worker", "--beat", "--pool=solo"),
            *("--loglevel=info", "-n", f"embed-{os.getpid()}-{time.monotonic_ns()}@%h"),
            *("-s", str(tmp_path / "beat-schedule")),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the kill takes the embedded beat with it
    )


def test_the_worker_embeds_an_import_and_heals_after_kill_9(
    transactional_db: Any, tmp_path: Path, make_token: Any
) -> None:
    broker = private_broker()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(
        DATABASE_URL=database_url(),
        REDIS_URL=broker,
        CONDOR_ACTIVE_PROFILE="",
        CONDOR_EMBED_BATCH="4",  # many small tasks, so the kill lands mid-way
        CONDOR_EMBED_SWEEP_EVERY_SECONDS="3",
    )
    # The import commits with no worker running: its embedding tasks wait in Redis.
    subprocess.run([sys.executable, "manage.py", "load_demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    total = embedding_status().total
    assert total > 400 and embedding_status().embedded == 0

    log = tmp_path / "worker.log"
    worker = start_worker(env, log, tmp_path)
    try:
        deadline = time.monotonic() + 180
        while embedding_status().embedded == 0 and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.05)
        os.killpg(worker.pid, signal.SIGKILL)  # mid-batch, worker and beat: no chance to ack, finish or clean up
        worker.wait(timeout=30)
        at_kill = embedding_status().embedded
        assert 0 < at_kill < total, log.read_text()[-3000:]

        # Lose every message still queued too: only the beat's sweep can bring the rest back.
        import redis

        redis.Redis.from_url(broker).flushdb()

        worker = start_worker(env, log, tmp_path)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and worker.poll() is None:
            status = embedding_status()
            if status.stale == status.missing == 0:
                break
            time.sleep(0.5)
        status = embedding_status()
        assert (status.embedded, status.stale, status.missing) == (total, 0, 0), log.read_text()[-3000:]
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
    assert "catalog.rag.tasks.sweep_embeddings" in log.read_text()
    duplicated = (
        ToolEmbedding.objects.values("tool_id", "model_id", "text_sha256").annotate(n=Count("pk")).filter(n__gt=1)
    )
    assert not duplicated.exists()
    # One vector per tool, plus the kept vector of the text in effect of each tool whose rewrite awaits sign-off
    # (the demo's pending r2 rewrites recordClinicalNote).
    rewritten = Tool.objects.filter(awaiting_signoff=True).exclude(in_effect_text_sha256="")
    kept = rewritten.exclude(in_effect_text_sha256=F("rag_text_sha256")).count()
    assert kept == 1 and ToolEmbedding.objects.count() == total + kept

    token = make_token("runtime-rag", scopes=("rag",))
    response = Client().post(
        "/api/v1/rag/resolve",
        {"prompt": "Blutdruck und Puls eintragen", "profile": "clinical-production"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 200, response.content
    assert "record.vitals" in response.json()["toolIds"]
