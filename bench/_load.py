"""Shared pieces of the HTTP load benchmarks (approvals_load.py, load_mixed.py): throw-away PostgreSQL and Redis,
the production environment over loopback, gunicorn, a minimal keep-alive HTTP/1.1 client and the console sign-in."""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
GUNICORN = str(Path(PY).parent / "gunicorn")
IDLE_LIMIT = 1.0  # drop pooled connections idle this long: gunicorn closes them after 2 s (--keep-alive)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- services --------------------------------------------------------------------------------------


class Services:
    """Throw-away PostgreSQL and Redis for one run; stopped on exit."""

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="condor-bench-"))
        self.stops: list[Callable[[], Any]] = []
        self.pg_data: Path | None = None  # the cluster's data directory, when this run started one

    def postgres(self) -> str:
        if os.environ.get("DATABASE_URL", "").startswith("postgres"):
            return os.environ["DATABASE_URL"]
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            sys.exit("no PostgreSQL server binaries found (apt-get install postgresql) and no DATABASE_URL")
        pgbin, port, data = bins[-1], free_port(), self.work / "pg"
        as_pg = os.geteuid() == 0  # initdb refuses to run as root
        if as_pg:
            shutil.chown(self.work, "postgres")

        def run(cmd: str) -> None:
            full = ["su", "postgres", "-s", "/bin/sh", "-c", cmd] if as_pg else ["/bin/sh", "-c", cmd]
            subprocess.run(full, check=True, stdout=subprocess.DEVNULL)

        run(f"'{pgbin}/initdb' -D '{data}' -A trust -U condor -E UTF8")
        opts = f"-p {port} -k '{self.work}' -c listen_addresses=127.0.0.1 -c max_connections=200"
        run(f"'{pgbin}/pg_ctl' -D '{data}' -l '{self.work}/pg.log' -w -o \"{opts}\" start")
        self.stops.append(lambda: run(f"'{pgbin}/pg_ctl' -D '{data}' -m immediate stop"))
        self.pg_data = data
        subprocess.run([f"{pgbin}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "condor", "condor"], check=True)
        return f"postgres://condor@127.0.0.1:{port}/condor"

    def postgres_pids(self) -> list[int]:
        """The postmaster of the cluster this run started (its backends are its children); none for a
        DATABASE_URL server, which is not ours to measure."""
        if self.pg_data is None:
            return []
        return [int((self.pg_data / "postmaster.pid").read_text().split()[0])]

    def redis(self) -> str:
        if os.environ.get("REDIS_URL"):
            return os.environ["REDIS_URL"]
        if not shutil.which("redis-server"):
            print("no redis-server: notifications run in-process after commit (slower than production)")
            return ""
        port = free_port()
        proc = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        self.stops.append(proc.terminate)
        time.sleep(0.3)
        return f"redis://127.0.0.1:{port}/0"

    def stop(self) -> None:
        for stop in reversed(self.stops):
            try:
                stop()
            except Exception as exc:  # keep stopping the rest
                print(f"stopping a service failed: {exc}", file=sys.stderr)
        shutil.rmtree(self.work, ignore_errors=True)


def production_env(services: Services) -> dict[str, str]:
    """This process's environment with the production settings, on the services' PostgreSQL and Redis."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(
        DATABASE_URL=services.postgres(),
        REDIS_URL=services.redis(),
        DEBUG="false",
        SECRET_KEY="bench-" + uuid.uuid4().hex,
        CONDOR_AUDIT_KEY="bench-audit-" + uuid.uuid4().hex + uuid.uuid4().hex,  # one key for every process
        ALLOWED_HOSTS="127.0.0.1",
        CONN_MAX_AGE="60",  # persistent connections, as a production deployment runs
        # Production settings, but plain HTTP on loopback (TLS would terminate in front of gunicorn).
        SECURE_SSL_REDIRECT="false",
        STATIC_ROOT=str(services.work / "static"),
        LOG_LEVEL="WARNING",
        CONDOR_ACTIVE_PROFILE="",
    )
    return env


def add_gunicorn_arguments(parser: argparse.ArgumentParser, *, workers: int, threads: int) -> None:
    parser.add_argument("--workers", type=int, default=workers, help=f"gunicorn worker processes (default {workers})")
    parser.add_argument("--worker-class", default="gthread", help="gunicorn worker class: gthread (default) or sync")
    parser.add_argument("--threads", type=int, default=threads, help=f"threads per gthread worker (default {threads})")


def gunicorn_options(args: argparse.Namespace) -> list[str]:
    """The command-line options of `add_gunicorn_arguments`, for `start_gunicorn`."""
    options = ["--workers", str(args.workers), "--worker-class", args.worker_class]
    return options + (["--threads", str(args.threads)] if args.worker_class == "gthread" else [])


def manage(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [PY, "manage.py", *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def start_gunicorn(
    env: dict[str, str],
    port: int,
    args: list[str],
    *,
    stdout: IO[Any] | None = None,
    stderr: IO[Any] | int | None = None,
) -> subprocess.Popen[bytes]:
    """gunicorn serving condor_admin.wsgi on 127.0.0.1:port with `args`; returns once it answers /login/."""
    if not shutil.which("gunicorn", path=str(Path(PY).parent)):
        sys.exit("gunicorn is not installed: pip install -e .")
    server = subprocess.Popen(
        [GUNICORN, "condor_admin.wsgi:application", "--bind", f"127.0.0.1:{port}", *args],
        cwd=ROOT,
        env=env,
        stdout=stdout,
        stderr=stderr,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=1)  # noqa: S310 - loopback
            return server
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.2)
    server.terminate()
    sys.exit("gunicorn did not start")


# --- a minimal keep-alive HTTP/1.1 client (the standard library has no async one) --------------------


class Connection:
    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.cookies: dict[str, str] = {}

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if self.cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        assert self.reader is not None
        try:
            head_block = await self.reader.readuntil(b"\r\n\r\n")  # the whole head in one read
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise
            self.writer = None  # the server closed an idle keep-alive connection: reconnect once
            return await self.request(method, path, body, headers)
        status_line, *header_lines = head_block[:-4].split(b"\r\n")
        status = int(status_line.split()[1])
        length, close = 0, False
        for line in header_lines:
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value.lower() == "close":
                close = True
            elif name == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        data = await self.reader.readexactly(length) if length else b""
        if close:
            self.writer.close()
            self.writer = None
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


# --- measuring -----------------------------------------------------------------------------------------


def interpreter() -> str:
    """Which CPython runs the stack (gunicorn, Celery and the generator all use this one), and whether it loads
    libpython as a shared library. The build matters: this machine's pyenv 3.11.7 (configured without
    --enable-optimizations, libpython shared) cost the web processes 13 % more CPU per request under the mixed load
    than Debian's python3.11 (libpython linked in). `calibration_work` differs between builds too."""
    maps = Path("/proc/self/maps")
    shared = "libpython" in maps.read_text() if maps.exists() else None
    linked = {True: "libpython shared", False: "libpython linked in", None: "libpython unknown"}[shared]
    return f"{sys.implementation.name} {sys.version.split()[0]} {os.path.realpath(PY)} ({linked})"


def calibration_work() -> float:
    """CPU seconds this process spends on a fixed piece of pure-Python work (dicts, strings, ints: what a request
    is made of). Not wall time: waiting for a core does not count, a core that runs slower (a busy neighbour on the
    host, a shared cache) does. Compared across the windows of a run and between runs on the same interpreter, it
    tells how fast the machine was. (Not against the idle machine: measured there before each run, it varied
    between runs as much. Not across interpreters: an optimised build does the same work in less time.)"""
    started = time.process_time()
    table = {str(i): i * i for i in range(8_000)}
    sum(len(key) + value for key, value in table.items())
    return time.process_time() - started


def calibrate_forever(every: float = 0.5) -> None:
    """Print "<monotonic time> <calibration CPU seconds>" every `every` seconds until killed (a side process)."""
    while True:
        print(f"{time.monotonic()} {calibration_work()}", flush=True)
        time.sleep(every)


def start_calibrator(into: Path) -> subprocess.Popen[bytes]:
    """calibrate_forever in its own process (a pure-Python loop in this one would stall its event loop)."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); from _load import calibrate_forever; calibrate_forever()"
    with into.open("wb") as out:
        return subprocess.Popen([PY, "-c", code, str(Path(__file__).parent)], stdout=out)


def calibration_of(path: Path) -> list[tuple[float, float]]:
    """The (time, CPU seconds) lines a calibrator wrote."""
    lines = (line.split() for line in path.read_text().splitlines())
    return [(float(parts[0]), float(parts[1])) for parts in lines if len(parts) == 2]


CLK_TCK = os.sysconf("SC_CLK_TCK")  # the unit of /proc's CPU times


def stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name: [0] state, [1] ppid, … [11] utime, [12] stime, [13] cutime,
    [14] cstime (in CLK_TCK); None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def all_stat_fields() -> dict[int, list[str]]:
    """stat_fields of every process now running."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := stat_fields(int(entry.name))) is not None:
            found[int(entry.name)] = fields
    return found


def children_of(parent: int) -> list[int]:
    """The pids whose parent is `parent` (the gunicorn workers of the master)."""
    return sorted(pid for pid, fields in all_stat_fields().items() if int(fields[1]) == parent)


def process_cpu(pid: int) -> float:
    """CPU seconds of one process (all its threads) so far; 0 once it is gone."""
    fields = stat_fields(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / CLK_TCK


class CpuMeter:
    """CPU seconds used so far by each part of the stack, read from /proc (Linux): the gunicorn workers, PostgreSQL
    (when this run started it), the Celery worker and beat, and this load generator. A part is its root processes
    and their children; a child that exited was reaped by its root, which then counts its CPU (cutime)."""

    def __init__(self, roots: dict[str, list[int]]) -> None:
        self.roots = roots  # part → its root pids

    def read(self) -> dict[str, float]:
        # pid → (ppid, cpu seconds of it and its reaped children)
        stats = {
            pid: (int(fields[1]), sum(int(f) for f in fields[11:15]) / CLK_TCK)
            for pid, fields in all_stat_fields().items()
        }
        used = {}
        for part, pids in self.roots.items():
            members = {pid for pid in pids if pid in stats}
            members |= {pid for pid, (ppid, _) in stats.items() if ppid in members}
            used[part] = sum(stats[pid][1] for pid in members)
        # This process and the load generators it ran to completion (wrk): the client side of the loopback.
        self_usage, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        used["client"] = self_usage.ru_utime + self_usage.ru_stime + children.ru_utime + children.ru_stime
        used["wall"] = time.monotonic()
        return used


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds per part between two readings, and the wall-clock seconds between them ("wall")."""
    return {part: max(0.0, after[part] - before.get(part, 0.0)) for part in after}


class Pool:
    """Keep-alive connections of one identity (a cookie jar), reused most-recent-first."""

    def __init__(self, port: int, cookies: dict[str, str] | None = None) -> None:
        self.port = port
        self.cookies = cookies or {}
        self.idle: list[tuple[float, Connection]] = []
        self.opened = 0

    def take(self) -> Connection:
        now = time.monotonic()
        while self.idle:
            last, conn = self.idle.pop()
            if now - last < IDLE_LIMIT:
                return conn
            conn.close()
        self.opened += 1
        conn = Connection(self.port)
        conn.cookies = dict(self.cookies)
        return conn

    def give(self, conn: Connection) -> None:
        self.idle.append((time.monotonic(), conn))


def smooth_mix(mix: dict[str, int]) -> list[str]:
    """One cycle of the mix with each kind spread evenly (smooth weighted round-robin), not in bursts."""
    current = dict.fromkeys(mix, 0)
    total, order = sum(mix.values()), []
    for _ in range(total):
        for kind, weight in mix.items():
            current[kind] += weight
        kind = max(current, key=lambda k: current[k])
        current[kind] -= total
        order.append(kind)
    return order


def log_problems(path: Path) -> list[str]:
    """Lines of a server log that say something went wrong (tracebacks, ERROR/CRITICAL, worker timeouts)."""
    if not path.exists():
        return []
    pattern = re.compile(r"Traceback|\bERROR\b|ERROR/|CRITICAL|WORKER TIMEOUT|Worker \(pid:\d+\) was sent")
    return [line for line in path.read_text(errors="replace").splitlines() if pattern.search(line)]


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in reversed(procs):
        proc.terminate()  # gunicorn: graceful, in-flight requests finish; celery: warm shutdown
    for proc in procs:
        try:
            proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
    procs.clear()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def sign_in(conn: Connection, username: str, password: str) -> str:
    """Sign in through the console's form; returns the CSRF token (the session cookie stays on `conn`)."""
    status, page = await conn.request("GET", "/login/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert status == 200 and token, status
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token.group(1).decode(), "username": username, "password": password}
    ).encode()
    status, _ = await conn.request("POST", "/login/", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 302 and "sessionid" in conn.cookies, f"sign-in failed ({status})"
    return conn.cookies["csrftoken"]
