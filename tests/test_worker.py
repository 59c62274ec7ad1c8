"""The Celery worker as operators start it: a real process, the boot gate, a real Redis broker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.shared_data import SqliteFiles

ROOT = Path(__file__).resolve().parent.parent
CELERY = [sys.executable, "-m", "celery", "-A", "condor_admin", "worker", "--pool=solo", "--loglevel=info"]


def service_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'worker.sqlite3'}", REDIS_URL="", CONDOR_ACTIVE_PROFILE="")
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)


@pytest.fixture
def demo_db(tmp_path: Path, sqlite_files: SqliteFiles) -> dict[str, str]:
    """What `migrate` and `load_demo` leave (tests/shared_data.py, SqliteFiles)."""
    sqlite_files.demo(tmp_path / "worker.sqlite3")
    return service_env(tmp_path)


def test_worker_refuses_to_start_when_a_demo_tool_is_active_under_the_clinical_profile(
    demo_db: dict[str, str],
) -> None:
    manage(
        demo_db,
        "shell",
        "-c",
        "from catalog.models import CatalogProfile;"
        "CatalogProfile.objects.filter(slug='clinical-production').update(includes=['generateDemoPatient'])",
    )
    env = {**demo_db, "CONDOR_ACTIVE_PROFILE": "clinical-production"}
    proc = subprocess.run(CELERY, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "condor.E001" in proc.stderr and "condor:generateDemoPatient" in proc.stderr
    assert "worker refused to start" in proc.stderr


def own_redis_database(url: str) -> str:
    """A Redis database of the test's own: tasks other tests queued on the suite's database are not this worker's to
    run (a solo worker busy with them, logging each one, cannot stop in time)."""
    return urlsplit(url)._replace(path="/13").geturl()


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs a real Redis: set REDIS_URL (CI does)")
def test_worker_starts_on_redis_under_the_clinical_profile_and_answers(demo_db: dict[str, str], tmp_path: Path) -> None:
    redis_url = own_redis_database(os.environ["REDIS_URL"])
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    env = {**demo_db, "REDIS_URL": redis_url, "CONDOR_ACTIVE_PROFILE": "clinical-production"}
    name = f"gate-{os.getpid()}@%h"
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        # The log goes to a file: a pipe nobody reads fills up and blocks the worker mid-sentence.
        worker = subprocess.Popen([*CELERY, "-n", name], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        from celery import Celery

        client: Any = Celery(broker=redis_url)
        replies: list[Any] = []
        deadline = time.monotonic() + 60
        while not replies and time.monotonic() < deadline and worker.poll() is None:
            replies = [r for r in client.control.ping(timeout=1.0) if any(f"gate-{os.getpid()}@" in k for k in r)]
        assert worker.poll() is None, log_path.read_text()
        assert replies, "the worker never answered a ping over Redis"
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=10)
            pytest.fail(f"the worker did not stop within 30 s of SIGTERM:\n{log_path.read_text()[-4000:]}")
