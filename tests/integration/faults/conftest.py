"""Fault tests: throw-away Redis servers and PostgreSQL clusters each test may stop and start at will.

They run in CI's second pass (DATABASE_URL on PostgreSQL, REDIS_URL set) and are skipped elsewhere: a fault
test needs the server binaries and a real PostgreSQL for the test process itself.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import ROOT

PY = sys.executable
PG_BINS = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: [int(x) for x in p.split("/")[-2].split(".")])

requires_services = [
    pytest.mark.skipif(
        "postgresql" not in settings.DATABASES["default"]["ENGINE"],
        reason="fault tests need a real PostgreSQL: set DATABASE_URL=postgres://… (CI's second pass does)",
    ),
    pytest.mark.skipif(
        not os.environ.get("REDIS_URL"), reason="fault tests need a real Redis: set REDIS_URL (CI's second pass does)"
    ),
    pytest.mark.skipif(
        not shutil.which("redis-server") or not PG_BINS,
        reason="fault tests start their own redis-server and PostgreSQL cluster: install redis-server and "
        "postgresql (.ci/run does)",
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def service_env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess of the app: ours without pytest's, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(CONDOR_ACTIVE_PROFILE="", LOG_LEVEL="WARNING")
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [PY, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def shared_database_url() -> str:
    """The test process's own (pytest-django) database, for subprocesses that must see the same rows."""
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class RedisServer:
    """A redis-server of our own on a fixed port, without persistence: stopping it loses every queued
    message, as a restarted production Redis without AOF does."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.workdir)),
            ],
            stdout=(self.workdir / "redis.log").open("a"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.5).ping()
                return
            except redis.ConnectionError:
                assert self.proc.poll() is None and time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class PostgresCluster:
    """A throw-away PostgreSQL cluster (initdb; as the postgres user when we are root, which initdb refuses)."""

    def __init__(self, workdir: Path) -> None:
        self.bin = PG_BINS[-1]
        self.port = free_port()
        self.workdir = workdir
        self.data = workdir / "pg"
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(workdir, "postgres")

    def url(self, database: str = "condor") -> str:
        return f"postgres://condor@127.0.0.1:{self.port}/{database}"

    def pg(self, command: str, timeout: float = 60) -> float:
        """Run a server binary (`initdb …`, `pg_ctl …`); returns its wall time."""
        line = f"'{self.bin}/{command.split(' ', 1)[0]}' {command.split(' ', 1)[1]}"
        full = ["su", "postgres", "-s", "/bin/sh", "-c", line] if self.as_postgres else ["/bin/sh", "-c", line]
        started = time.monotonic()
        subprocess.run(full, check=True, stdout=subprocess.DEVNULL, timeout=timeout)
        return time.monotonic() - started

    def init(self) -> None:
        self.pg(f"initdb -D '{self.data}' -A trust -U condor -E UTF8")
        self.start()
        subprocess.run([f"{self.bin}/createdb", *self.conn_args, "condor"], check=True, timeout=30)

    @property
    def conn_args(self) -> list[str]:
        return ["-h", "127.0.0.1", "-p", str(self.port), "-U", "condor"]

    def start(self) -> float:
        opts = f"-p {self.port} -k '{self.workdir}' -c listen_addresses=127.0.0.1 -c fsync=off"
        return self.pg(f"pg_ctl -D '{self.data}' -l '{self.workdir}/pg.log' -w -o \"{opts}\" start")

    def stop(self, mode: str = "fast") -> float:
        return self.pg(f"pg_ctl -D '{self.data}' -m {mode} -w stop")

    def restart(self, mode: str = "fast") -> float:
        opts = f"-p {self.port} -k '{self.workdir}' -c listen_addresses=127.0.0.1 -c fsync=off"
        return self.pg(f"pg_ctl -D '{self.data}' -l '{self.workdir}/pg.log' -m {mode} -w -o \"{opts}\" restart")

    def destroy(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop("immediate")
            except subprocess.SubprocessError as exc:  # keep cleaning up
                print(f"stopping the throw-away PostgreSQL failed: {exc}", file=sys.stderr)


@pytest.fixture
def postgres_cluster() -> Iterator[PostgresCluster]:
    # Not under pytest's tmp_path: its parents are private to us, and the postgres user must reach the data
    # directory and the socket (whose path must also stay short).
    workdir = Path(tempfile.mkdtemp(prefix="condor-faults-pg-"))
    cluster = PostgresCluster(workdir)
    try:
        cluster.init()
        yield cluster
    finally:
        cluster.destroy()
        shutil.rmtree(workdir, ignore_errors=True)


def wait_for(predicate: object, timeout: float, interval: float = 0.25) -> float:
    """Poll `predicate()` until it is true; returns the seconds it took. Fails the test on timeout."""
    assert callable(predicate)
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, f"still false after {timeout:.0f} s"
        time.sleep(interval)
    return time.monotonic() - started
