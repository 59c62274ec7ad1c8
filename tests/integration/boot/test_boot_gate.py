"""The boot gate in every long-running process, each started as operators start it (the Procfile's lines).

Under a clinical profile with a demo-only tool active, gunicorn, the Celery worker and Celery beat exit non-zero
before doing any work and print the very lines `manage.py check` prints; gunicorn never answers on its port. Under
the same profile with only production tools active, all three start.

Each process gets a SQLite file of its own, in the SQLite run and in CI's PostgreSQL run alike (the gate reads one
table and one setting; which database engine serves them changes nothing it decides), and the in-memory broker
(REDIS_URL unset: `memory://`), so no server is needed.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.integration.faults.conftest import free_port, manage, service_env
from tests.shared_data import SqliteFiles
from tests.test_production import procfile

EXIT_WITHIN = 30.0  # seconds a refusing process may take to exit
START_WITHIN = 45.0  # seconds a process under a clean state may take to show it started

# Imported through the importer (a manifest cannot activate a demo-only tool under a clinical profile: the importer
# refuses it), then the profile row is edited behind its back, the state the gate exists for. The clean copy of the
# database is taken before that edit.
PREPARE = """
import shutil
from django.db import connection
from catalog.models import CatalogProfile
from tests.conftest import condor_manifest, condor_tool, encode, signed_import
tools = [condor_tool("listActiveMedications"), condor_tool("generateDemoPatient", availability="demo-only")]
signed_import(encode(condor_manifest(tools, forcedFloors=[])))
connection.close()
shutil.copyfile({gated!r}, {clean!r})
CatalogProfile.objects.filter(slug="clinical-production").update(includes=["generateDemoPatient"])
"""


@dataclass(frozen=True)
class Databases:
    gated: dict[str, str]  # environment of a process under the boot-gate condition
    clean: dict[str, str]  # the same profile with only production tools active
    expected: list[str]  # the lines of `manage.py check` that name the error: `obj: (condor.E001) …` and its HINT


@pytest.fixture(scope="module")
def databases(tmp_path_factory: Any, sqlite_files: SqliteFiles) -> Databases:
    tmp = tmp_path_factory.mktemp("boot")
    gated_db, clean_db = tmp / "gated.sqlite3", tmp / "clean.sqlite3"
    env = service_env(
        DATABASE_URL=f"sqlite:///{gated_db}",
        REDIS_URL="",  # the memory:// broker, tasks in-process (condor_admin/settings.py)
        CACHE_URL="",
        DEBUG="true",
        LOG_LEVEL="INFO",
        PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",  # the virtualenv's gunicorn, celery
    )
    sqlite_files.migrated(gated_db)  # what `migrate` leaves
    manage(env, "shell", "-c", PREPARE.format(gated=str(gated_db), clean=str(clean_db)))
    gated = {**env, "CONDOR_ACTIVE_PROFILE": "clinical-production"}
    check = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=gated, capture_output=True, text=True, timeout=60
    )
    assert check.returncode != 0, check.stdout + check.stderr
    lines = check.stderr.splitlines()
    (at,) = [i for i, line in enumerate(lines) if "(condor.E001)" in line]
    expected = lines[at : at + 2]
    assert expected[0].startswith("clinical-production: (condor.E001) ") and "condor:generateDemoPatient" in expected[0]
    assert expected[1].startswith("\tHINT: ")
    return Databases(gated=gated, clean={**gated, "DATABASE_URL": f"sqlite:///{clean_db}"}, expected=expected)


@dataclass
class Probe:
    """GETs /login/ on a port over and over while a server process lives; records every HTTP answer."""

    port: int
    answers: list[int] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
            try:
                connection.request("GET", "/login/")
                self.answers.append(connection.getresponse().status)
            except (OSError, http.client.HTTPException):  # refused, reset, no answer in time: not served
                time.sleep(0.05)
            finally:
                connection.close()


@dataclass
class Started:
    proc: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def start(command: str, env: dict[str, str], log: Path) -> Started:
    """A Procfile line run as a process manager runs it; its own process group, so its children go with it."""
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    return Started(proc, log)


def stop(started: Started) -> None:
    if started.proc.poll() is None:
        os.killpg(started.proc.pid, signal.SIGTERM)
        try:
            started.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(started.proc.pid, signal.SIGKILL)
            started.proc.wait(timeout=10)


def wait_for(started: Started, predicate: Any, what: str) -> float:
    began = time.monotonic()
    while not predicate():
        assert started.proc.poll() is None, f"exited with {started.proc.returncode} before {what}:\n{started.output()}"
        assert time.monotonic() - began < START_WITHIN, f"no {what} after {START_WITHIN:.0f} s:\n{started.output()}"
        time.sleep(0.1)
    return time.monotonic() - began


def refused(started: Started) -> tuple[int, float, str]:
    """Waits for a process that must refuse; returns its status, seconds to exit and output."""
    began = time.monotonic()
    try:
        code = started.proc.wait(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        stop(started)
        pytest.fail(f"still running after {EXIT_WITHIN:.0f} s:\n{started.output()}")
    return code, time.monotonic() - began, started.output()


def says_what_check_says(output: str, process: str, expected: list[str]) -> None:
    lines = output.splitlines()
    assert f"{process} refused to start: 1 system check error(s), as `manage.py check` reports:" in lines, output
    at = lines.index(expected[0]) if expected[0] in lines else -1
    assert at >= 0 and lines[at : at + 2] == expected, f"expected\n{expected}\nin\n{output}"


def web_command(port: int) -> tuple[str, dict[str, str]]:
    command = procfile()["web"].replace("0.0.0.0", "127.0.0.1")
    return command, {"PORT": str(port), "WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "2"}


@pytest.fixture
def probed(databases: Databases) -> Iterator[Probe]:
    probe = Probe(free_port())
    thread = threading.Thread(target=probe.run, daemon=True)
    thread.start()
    yield probe
    probe.stop.set()
    thread.join(timeout=5)


# --- refused under the boot-gate condition -------------------------------------------------------------------


def test_gunicorn_as_the_procfile_starts_it_refuses_before_it_listens(
    databases: Databases, probed: Probe, tmp_path: Path
) -> None:
    command, extra = web_command(probed.port)
    assert "--config python:condor_admin.gunicorn_conf" in command
    code, seconds, output = refused(start(command, {**databases.gated, **extra}, tmp_path / "web.log"))
    print(f"\n[boot gate] gunicorn (Procfile) refused in {seconds:.1f} s, exit {code}")
    assert code == 1, output
    says_what_check_says(output, "web", databases.expected)
    assert "Listening at" not in output and "Booting worker" not in output  # the arbiter never bound the port
    assert probed.answers == []


def test_gunicorn_without_the_config_hook_fails_its_workers_boot_and_halts(
    databases: Databases, probed: Probe, tmp_path: Path
) -> None:
    """`gunicorn condor_admin.wsgi:application` alone (as the benchmarks start it): the WSGI application load
    runs the gate; the worker exits with WORKER_BOOT_ERROR and the arbiter halts (it bound the port first)."""
    gunicorn = Path(sys.executable).parent / "gunicorn"
    command = f"{gunicorn} condor_admin.wsgi:application --bind 127.0.0.1:{probed.port} --workers 1"
    code, seconds, output = refused(start(command, databases.gated, tmp_path / "web.log"))
    print(f"\n[boot gate] gunicorn (no --config) refused in {seconds:.1f} s, exit {code}")
    assert code == 3, output
    says_what_check_says(output, "web", databases.expected)
    assert "Reason: Worker failed to boot." in output
    assert probed.answers == []


def test_the_worker_refuses_to_start(databases: Databases, tmp_path: Path) -> None:
    code, seconds, output = refused(start(procfile()["worker"], databases.gated, tmp_path / "worker.log"))
    print(f"\n[boot gate] worker refused in {seconds:.1f} s, exit {code}")
    assert code == 1, output
    says_what_check_says(output, "worker", databases.expected)
    assert " ready." not in output


def test_beat_refuses_to_start_before_it_sends_a_task(databases: Databases, tmp_path: Path) -> None:
    command = beat_command(tmp_path)
    env = {**databases.gated, "APPROVALS_NOTIFY_EVERY_SECONDS": "0.5"}
    code, seconds, output = refused(start(command, env, tmp_path / "beat.log"))
    print(f"\n[boot gate] beat refused in {seconds:.1f} s, exit {code}")
    assert code == 1, output
    says_what_check_says(output, "beat", databases.expected)
    assert "Sending due task" not in output


def beat_command(tmp_path: Path) -> str:
    command = procfile()["beat"]
    assert "--schedule /tmp/condor-celerybeat-schedule" in command
    return command.replace("/tmp/condor-celerybeat-schedule", str(tmp_path / "beat-schedule"))


# --- the positive controls: the same profile, only production tools active -----------------------------------


def test_gunicorn_serves_under_a_clean_clinical_profile(databases: Databases, probed: Probe, tmp_path: Path) -> None:
    command, extra = web_command(probed.port)
    web = start(command, {**databases.clean, **extra}, tmp_path / "web.log")
    try:
        seconds = wait_for(web, lambda: 200 in probed.answers, "HTTP 200 on /login/")
        print(f"\n[boot gate] gunicorn (Procfile) served HTTP 200 after {seconds:.1f} s")
    finally:
        stop(web)
    assert "refused to start" not in web.output()


def test_the_worker_starts_under_a_clean_clinical_profile(databases: Databases, tmp_path: Path) -> None:
    worker = start(procfile()["worker"], databases.clean, tmp_path / "worker.log")
    try:
        seconds = wait_for(worker, lambda: " ready." in worker.output(), "`ready.` from the worker")
        print(f"\n[boot gate] worker ready after {seconds:.1f} s")
    finally:
        stop(worker)
    assert "refused to start" not in worker.output()


def test_beat_starts_and_ticks_under_a_clean_clinical_profile(databases: Databases, tmp_path: Path) -> None:
    env = {**databases.clean, "APPROVALS_NOTIFY_EVERY_SECONDS": "0.5"}
    beat = start(beat_command(tmp_path), env, tmp_path / "beat.log")
    try:
        seconds = wait_for(beat, lambda: "Sending due task" in beat.output(), "a task sent by beat")
        print(f"\n[boot gate] beat sent its first task after {seconds:.1f} s")
    finally:
        stop(beat)
    assert "refused to start" not in beat.output()


def test_manage_py_check_passes_on_the_clean_copy(databases: Databases) -> None:
    """The controls are honest: the clean copy is the gated database before the edit, and `check` passes on it."""
    check = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=databases.clean, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
