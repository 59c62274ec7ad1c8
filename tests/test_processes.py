"""The Procfile's processes: beat runs as a process of its own only, so a worker killed and started again leaves no
second beat behind.

Why it matters: `celery worker --beat` runs its beat in a child process, and a SIGKILL of the worker (an OOM kill,
`kill -9`, a container runtime's hard stop) leaves that child running, orphaned; the restarted worker starts a beat of
its own, and from then on every periodic task (sealing the audit log, expiring and escalating approvals, announcing
new requests) is sent twice. The second test shows that orphan, so the first one's "one beat" is not a blind spot.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

MARK = "CONDOR_PROCESS_TEST"  # in the environment of every process a test here starts, and so of their children
requires_redis = pytest.mark.skipif(
    not os.environ.get("REDIS_URL"), reason="starts Celery processes on a real broker: set REDIS_URL (CI does)"
)


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip() and not line.startswith("#"))


def runs_beat(argv: list[str]) -> bool:
    """`celery … beat`, or a worker that embeds one (`--beat`, `-B`, also among combined short flags)."""
    if "beat" in argv:
        return True
    embeds = any(a == "--beat" or (a.startswith("-") and not a.startswith("--") and "B" in a[1:]) for a in argv)
    return "worker" in argv and embeds


def test_exactly_one_procfile_line_runs_beat_and_no_worker_line_embeds_one() -> None:
    commands = {name: shlex.split(command) for name, command in procfile().items()}
    assert [name for name, argv in commands.items() if runs_beat(argv)] == ["beat"]
    assert commands["beat"][:4] == ["celery", "-A", "condor_admin", "beat"]
    assert commands["worker"][:4] == ["celery", "-A", "condor_admin", "worker"]
    # The check itself sees an embedded beat however it is spelt.
    for spelling in ("--beat", "-B", "-BE"):
        assert runs_beat(["celery", "-A", "condor_admin", "worker", spelling])


# --- the real processes -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    argv: list[str]


def processes_marked(token: str) -> list[Proc]:
    """Every live process whose environment carries MARK=token (ours, and their children, orphaned or not)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"{MARK}={token}".encode() not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            argv = [a.decode() for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
            status = (entry / "status").read_text()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if "\nState:\tZ" in status:  # a zombie runs nothing
            continue
        ppid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        found.append(Proc(int(entry.name), ppid, argv))
    return found


class Processes:
    """Procfile commands started as a process manager would (`bash -c "exec …"`), each logging to a file."""

    def __init__(self, tmp_path: Path) -> None:
        self.token = uuid.uuid4().hex
        self.tmp_path = tmp_path
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
        self.env.update(
            {MARK: self.token, "CONDOR_ACTIVE_PROFILE": "", "LOG_LEVEL": "INFO"},
            # A database of their own (nothing here runs a task), and no periodic task falls due during the test.
            DATABASE_URL=f"sqlite:///{tmp_path / 'empty.sqlite3'}",
            PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
            **{
                name: "3600"
                for name in (
                    "AUDIT_SEAL_EVERY_SECONDS",
                    "CONDOR_EMBED_SWEEP_EVERY_SECONDS",
                    "APPROVALS_NOTIFY_EVERY_SECONDS",
                    "APPROVALS_EXPIRE_EVERY_SECONDS",
                    "APPROVALS_ESCALATE_EVERY_SECONDS",
                )
            },
        )

    def start(self, name: str, command: str, ready: str) -> subprocess.Popen[bytes]:
        log = self.tmp_path / f"{name}.log"
        offset = log.stat().st_size if log.exists() else 0
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=ROOT,
            env=self.env,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while ready not in log.read_text()[offset:]:
            assert process.poll() is None, f"{name} ended:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"{name} not ready after 60 s:\n{log.read_text()[-3000:]}"
            time.sleep(0.2)
        return process

    def wait_until_only(self, keep: set[int], timeout: float = 10) -> list[Proc]:
        """The marked processes once every one outside `keep` and their children has ended (or the timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            left = processes_marked(self.token)
            if all(p.pid in keep or p.ppid in keep for p in left) or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def end_all(self) -> None:
        """Stop every process this test started (found by its mark, so orphans too), by pid."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for proc in processes_marked(self.token):
                try:
                    os.kill(proc.pid, sig)
                except ProcessLookupError:
                    pass
            time.sleep(1)


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    started = Processes(tmp_path)
    try:
        yield started
    finally:
        started.end_all()


def beat_command(tmp_path: Path) -> str:
    return procfile()["beat"].replace("/tmp/condor-celerybeat-schedule", str(tmp_path / "beat-schedule"))


WORKER_READY = "ready."
BEAT_READY = "beat: Starting"


@requires_redis
def test_a_worker_killed_and_started_again_leaves_the_procfiles_one_beat(processes: Processes) -> None:
    beat = processes.start("beat", beat_command(processes.tmp_path), BEAT_READY)
    worker = processes.start("worker", procfile()["worker"], WORKER_READY)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)
    # The killed worker's pool children notice and end; nothing of it stays behind.
    left = processes.wait_until_only({beat.pid})
    assert [p.pid for p in left] == [beat.pid], left
    again = processes.start("worker", procfile()["worker"], WORKER_READY)
    running = processes_marked(processes.token)
    assert [p.pid for p in running if runs_beat(p.argv)] == [beat.pid], running
    assert {p.pid for p in running} - {beat.pid} == {again.pid} | {p.pid for p in running if p.ppid == again.pid}


@requires_redis
def test_a_worker_with_an_embedded_beat_killed_leaves_its_beat_running(processes: Processes) -> None:
    """What the Procfile avoids (and what the first test would see): the orphaned beat of `worker --beat`."""
    command = f"{procfile()['worker']} --beat --schedule {processes.tmp_path / 'embedded-schedule'}"
    worker = processes.start("embedded", command, WORKER_READY)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)
    left = processes.wait_until_only(set(), timeout=5)  # the pool children end; the beat child does not
    orphans = [p for p in left if runs_beat(p.argv)]
    assert len(orphans) == 1 and orphans[0].ppid != worker.pid, left
