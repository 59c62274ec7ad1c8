"""Benchmark: the approvals API under gunicorn on PostgreSQL, driven from a load generator on loopback.

Phases (each --seconds long, closed loop: every connection sends its next request when the last answered):
  evaluate  POST /api/v1/approvals/evaluate, every call suspending (tier high) with a fresh idempotency key
  bare      POST /bench/bare-insert: a bare Django view inserting the same row (no token, policy, audit)
  flow      the whole life of a call: evaluate → GET → decide (the approver's htmx POST) → consume

Reports requests/s, p50/p90/p99/max latency and errors per phase, and the evaluate/bare ratio.
Starts its own throw-away PostgreSQL (initdb, as the postgres user when run as root) unless DATABASE_URL
names one, and its own Redis (the broker notifications are queued to) unless REDIS_URL is set.

    .venv/bin/python bench/approvals_load.py [--seconds 60] [--concurrency 8] [--workers 4]
        [--worker-class sync|gthread] [--threads 1] [--phases evaluate,bare,flow]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
PATIENT = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- services --------------------------------------------------------------------------------------


class Services:
    """Throw-away PostgreSQL and Redis for one run; stopped on exit."""

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="condor-bench-"))
        self.stops: list[Any] = []

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
        subprocess.run([f"{pgbin}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "condor", "condor"], check=True)
        return f"postgres://condor@127.0.0.1:{port}/condor"

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
        status_line = await self.reader.readline()
        if not status_line:  # the server closed an idle keep-alive connection: reconnect once
            self.writer = None
            return await self.request(method, path, body, headers)
        status = int(status_line.split()[1])
        length, close = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
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


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    samples: list[str] = field(default_factory=list)

    def record(self, name: str, started: float, ok: bool, detail: bytes = b"") -> None:
        self.latencies[name].append(time.perf_counter() - started)
        if not ok:
            self.errors[name] += 1
            if len(self.samples) < 5:
                self.samples.append(f"{name}: {detail[:300]!r}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def report(phase: str, stats: Stats, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    print(f"\n{phase}: {seconds:.0f} s")
    columns = ("requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms")
    print(f"  {'endpoint':<10} " + " ".join(f"{c:>9}" for c in columns) + " errors")
    for name, values in stats.latencies.items():
        row = {
            "requests": len(values),
            "rps": len(values) / seconds,
            "p50": statistics.median(values) * 1000,
            "p90": percentile(values, 90) * 1000,
            "p99": percentile(values, 99) * 1000,
            "max": max(values) * 1000,
            "errors": stats.errors.get(name, 0),
        }
        out[name] = row
        print(
            f"  {name:<10} {row['requests']:>9} {row['rps']:>9.1f} {row['p50']:>9.1f} {row['p90']:>9.1f} "
            f"{row['p99']:>9.1f} {row['max']:>9.1f} {row['errors']}"
        )
    for sample in stats.samples:
        print(f"  error sample: {sample}")
    return out


# --- the load ----------------------------------------------------------------------------------------


def evaluate_body(key: str) -> bytes:
    return json.dumps(
        {
            "tool": "prescribeMedication",
            "profile": "clinical-production",
            "dispatchMode": "supervised",
            "runId": "bench-run",
            "requestedBy": "dr.house",
            "patientRef": PATIENT,
            "args": {"patientId": PATIENT, "drug": "Amoxicillin", "dose": "500 mg", "route": "oral", "key": key},
            "idempotencyKey": key,
        }
    ).encode()


async def sign_in(conn: Connection, username: str, password: str) -> str:
    status, page = await conn.request("GET", "/login/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert status == 200 and token, status
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token.group(1).decode(), "username": username, "password": password}
    ).encode()
    status, _ = await conn.request("POST", "/login/", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 302 and "sessionid" in conn.cookies, f"sign-in failed ({status})"
    return conn.cookies["csrftoken"]


async def drive(port: int, phase: str, seconds: float, concurrency: int, token: str, password: str) -> Stats:
    stats = Stats()
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    deadline = time.perf_counter() + seconds

    async def user(n: int) -> None:
        conn, web = Connection(port), Connection(port)
        csrf = await sign_in(web, "bench-approver", password) if phase == "flow" else ""
        i = 0
        while time.perf_counter() < deadline:
            i += 1
            key = f"{phase}-{n}-{i}-{uuid.uuid4().hex[:8]}"
            started = time.perf_counter()
            if phase == "bare":
                status, body = await conn.request("POST", "/bench/bare-insert", evaluate_body(key), auth)
                stats.record("bare", started, status == 201, body)
                continue
            status, body = await conn.request("POST", "/api/v1/approvals/evaluate", evaluate_body(key), auth)
            ok = status == 201
            stats.record("evaluate", started, ok, body)
            if phase != "flow" or not ok:
                continue
            req = json.loads(body)["request"]
            started = time.perf_counter()
            status, body = await conn.request("GET", f"/api/v1/approvals/{req['id']}", b"", auth)
            stats.record("get", started, status == 200 and json.loads(body)["state"] == "pending", body)
            started = time.perf_counter()
            status, body = await web.request(
                "POST",
                f"/approvals/{req['id']}/decide",
                b"decision=approve",
                {"Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": csrf, "HX-Request": "true"},
            )
            stats.record("decide", started, status == 200 and b"approved by you" in body, body)
            started = time.perf_counter()
            sha = json.dumps({"argsSha256": req["argsSha256"]}).encode()
            status, body = await conn.request("POST", f"/api/v1/approvals/{req['id']}/consume", sha, auth)
            stats.record("consume", started, status == 200, body)

    await asyncio.gather(*(user(n) for n in range(concurrency)))
    return stats


# --- setup and main ------------------------------------------------------------------------------------


def manage(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [PY, "manage.py", *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


SETUP = """
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from catalog.models import ApiToken
raw = ApiToken.generate()
ApiToken.objects.create(name="bench-runtime", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=["approvals"])
user = get_user_model().objects.create_user("bench-approver", password="{password}")
user.groups.add(*(Group.objects.get_or_create(name=n)[0] for n in ("approver", "approver:medication")))
print("TOKEN=" + raw)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase (default 60)")
    parser.add_argument("--concurrency", type=int, default=8, help="connections driving the load (default 8)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes (default 4)")
    parser.add_argument("--threads", type=int, default=1, help="threads per gunicorn worker (gthread only)")
    # sync workers measured fastest for short calls on 2 cores; long-polls (GET ?wait=N) need gthread.
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class: sync (default) or gthread")
    parser.add_argument("--phases", default="evaluate,bare,flow", help="comma-separated: evaluate, bare, flow")
    args = parser.parse_args()
    if not shutil.which("gunicorn", path=str(Path(PY).parent)):
        sys.exit("gunicorn is not installed: pip install -e '.[bench]'")

    # A terminated run still stops what it started (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    services = Services()
    server = None
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
        env.update(
            DATABASE_URL=services.postgres(),
            REDIS_URL=services.redis(),
            DEBUG="false",
            SECRET_KEY="bench-" + uuid.uuid4().hex,
            ALLOWED_HOSTS="127.0.0.1",
            CONN_MAX_AGE="60",  # persistent connections, as a production deployment runs
            # Production settings, but plain HTTP on loopback (TLS would terminate in front of gunicorn).
            SECURE_SSL_REDIRECT="false",
            STATIC_ROOT=str(services.work / "static"),
            LOG_LEVEL="WARNING",
            CONDOR_ACTIVE_PROFILE="",
        )
        manage(env, "migrate", "--no-input", "-v0")
        manage(env, "collectstatic", "--no-input", "-v0")
        manage(env, "load_demo")
        password = uuid.uuid4().hex
        token = manage(env, "shell", "-c", SETUP.format(password=password)).split("TOKEN=")[1].strip()
        port = free_port()
        server_env = {**env, "DJANGO_SETTINGS_MODULE": "approvals_bench_settings"}
        server = subprocess.Popen(
            [
                str(Path(PY).parent / "gunicorn"),
                "condor_admin.wsgi:application",
                "--pythonpath",
                str(ROOT / "bench"),
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(args.workers),
                "--worker-class",
                args.worker_class,
                "--threads",
                str(args.threads),
                "--keep-alive",
                "30",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=server_env,
        )
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=1)  # noqa: S310 - loopback
                break
            except OSError:
                time.sleep(0.2)
        else:
            sys.exit("gunicorn did not start")
        print(
            f"gunicorn: {args.workers} {args.worker_class} workers × {args.threads} threads on 127.0.0.1:{port}; "
            f"PostgreSQL {env['DATABASE_URL'].rsplit('@', 1)[-1]}; broker {env['REDIS_URL'] or 'none'}; "
            f"{args.concurrency} connections; {os.cpu_count()} CPUs"
        )
        # Warm every worker (imports, connections, caches) before measuring.
        asyncio.run(drive(port, "flow", 3, args.concurrency, token, password))
        results: dict[str, Any] = {}
        for phase in [p.strip() for p in args.phases.split(",") if p.strip()]:
            stats = asyncio.run(drive(port, phase, args.seconds, args.concurrency, token, password))
            results[phase] = report(phase, stats, args.seconds)
        if "evaluate" in results and "bare" in results:
            ratio = results["evaluate"]["evaluate"]["rps"] / results["bare"]["bare"]["rps"]
            print(f"\nevaluate / bare insert throughput: {ratio:.2f} (same run, same server)")
        errors = sum(row["errors"] for phase in results.values() for row in phase.values())
        print(f"\nerrors: {errors}")
        out = ROOT / "bench" / "out"
        out.mkdir(exist_ok=True)
        (out / "approvals.json").write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
        if errors:
            sys.exit(1)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        services.stop()


if __name__ == "__main__":
    main()
