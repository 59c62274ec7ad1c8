"""Connections: the ways Django offers to hold PostgreSQL connections, side by side under the Procfile's gunicorn.

  fresh       CONN_MAX_AGE=0: a new connection for every request (and for every read of a long-poll)
  persistent  CONN_MAX_AGE=60 with CONN_HEALTH_CHECKS: each gunicorn thread keeps its own connection, checked
              before reuse
  pool        Django's psycopg pool (OPTIONS["pool"], needs psycopg[pool]) sized for the threads: min_size 2,
              max_size = --threads, timeout 2 s; CONN_MAX_AGE=0, a request takes a connection from its worker's pool
              and gives it back at its end (a long-poll between two reads too)
  pool-half   the same pool with max_size = --threads / 2: fewer backends, a request may wait for a connection
(the pools are set by bench/connections_settings.py, the rest by the app's own settings)

One throw-away PostgreSQL, Redis, Celery worker and beat and the demo catalog (load_mixed.start_app) serve every
run. Then --rounds rounds, each running every candidate once, in an order that rotates from round to round (the
machine is shared: a neighbour's burst falls on a different candidate each time). For each candidate gunicorn is
started anew (the Procfile's: gthread, --workers × --threads) with the candidate's environment, and:
  load    load_mixed's open-loop mix at --rate for --seconds, with --waiters runtimes long-polling (?wait=--wait):
          latency p50/p99 from the scheduled instant, CPU milliseconds per request of the gunicorn workers and of
          PostgreSQL (from /proc), the PostgreSQL connections the gunicorn workers hold (their sockets to the
          server, every second: mean and max), all client backends and the sessions PostgreSQL started per second
  outage  runtime calls (evaluate, poll, owner lookup, card bundle) at --outage-rate and two long-polls while
          PostgreSQL is restarted (pg_ctl restart -m fast), stopped for --down seconds and started, and restarted
          again while nobody calls. Per outage: the requests that failed, how they were answered (503 JSON is
          what the API promises), the slowest failure, and when the first request succeeded once the server was
          back and when the last one failed.
The Celery worker and beat keep the settings' default throughout (only the web process is compared).
Results: bench/out/connections.json, and a table per candidate of every round.

    .venv/bin/python bench/connections.py [--rounds 3] [--seconds 45] [--rate 40] [--waiters 6] [--wait 30]
        [--candidates fresh,persistent,pool]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import importlib.util
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from _load import (
    ROOT,
    CpuMeter,
    Services,
    children_of,
    free_port,
    gunicorn_options,
    log_problems,
    manage,
    start_gunicorn,
    stop,
)
from load_mixed import MIX, Load, drive, report, start_app

CANDIDATES = ("fresh", "persistent", "pool", "pool-half")
RECOVERY = 3.0  # seconds after the server is back within which a failure still counts to its outage
OUTAGE_KINDS = ("evaluate", "poll", "owners", "cards")


# --- what PostgreSQL and the web workers hold ------------------------------------------------------------


def pg_sockets(pids: list[int], port: int) -> int:
    """Established TCP connections from these processes to 127.0.0.1:port (/proc: their socket inodes)."""
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    link = os.readlink(fd)
                    if link.startswith("socket:["):
                        inodes.add(link[8:-1])
    remote = f"0100007F:{port:04X}"
    rows = (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
    return sum(1 for f in rows if f[2] == remote and f[3] == "01" and f[9] in inodes)


class Backends:
    """Every second: the web workers' connections to PostgreSQL, all client backends, sessions started so far."""

    def __init__(self, url: str, workers: list[int]) -> None:
        self.url, self.workers = url, workers
        self.port = int(url.rsplit(":", 1)[1].split("/")[0])
        self.samples: list[tuple[float, int, int, int]] = []  # (loop time, web sockets, client backends, sessions)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        with psycopg.connect(self.url, autocommit=True) as conn:
            while True:
                row = conn.execute(
                    "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),"
                    " (SELECT sessions FROM pg_stat_database WHERE datname = current_database())"
                ).fetchone()
                assert row is not None
                self.samples.append((loop.time(), pg_sockets(self.workers, self.port), int(row[0]), int(row[1])))
                await asyncio.sleep(1.0)

    def summary(self, t0: float, t1: float) -> dict[str, float]:
        inside = [s for s in self.samples if t0 <= s[0] <= t1]
        if len(inside) < 2:
            return {}
        span = inside[-1][0] - inside[0][0]
        return {
            "web_conns_mean": statistics.mean(s[1] for s in inside),
            "web_conns_max": max(s[1] for s in inside),
            "backends_max": max(s[2] for s in inside),
            "sessions_per_s": (inside[-1][3] - inside[0][3]) / span,
        }


# --- the load, per candidate -------------------------------------------------------------------------------


def candidate_env(name: str, threads: int) -> dict[str, str]:
    pool = {"pool": threads, "pool-half": max(1, threads // 2)}.get(name, 0)
    return {
        "DJANGO_SETTINGS_MODULE": "connections_settings",
        "CONN_MAX_AGE": "0" if name != "persistent" else "60",
        "BENCH_POOL_MAX_SIZE": str(pool),
    }


def start_web(app: dict[str, Any], args: argparse.Namespace, name: str, round_no: int) -> dict[str, Any]:
    """gunicorn as the Procfile starts it, with the candidate's connection settings; the `app` drive() expects."""
    env = {**app["env"], **candidate_env(name, args.threads)}
    port = free_port()
    log = app["logs"] / f"web-{name}-{round_no}.log"
    options = [*gunicorn_options(args), "--timeout", "60", "--access-logfile", str(app["logs"] / "access.log")]
    options += ["--pythonpath", "bench"]  # connections_settings
    server = start_gunicorn(env, port, options, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    roots = {"web": [server.pid], "celery": app["celery_pids"], "db": app["services"].postgres_pids()}
    return {**app, "env": env, "port": port, "cpu": CpuMeter(roots), "server": server, "log": log}


async def measure_load(web: dict[str, Any], args: argparse.Namespace) -> tuple[dict[str, Any], Load]:
    backends = Backends(web["env"]["DATABASE_URL"], children_of(web["server"].pid))
    sampler = asyncio.create_task(backends.run())
    try:
        run = await drive(web, args)
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
    rows = report(run.stats, args.seconds, run.drain)
    problems = log_problems(web["log"])
    if problems:  # the first one with what follows it (the log goes with the run's throw-away directory)
        lines = web["log"].read_text(errors="replace").splitlines()
        first = lines.index(problems[0])
        print(f"  web log, {len(problems)} problem lines; the first:\n    " + "\n    ".join(lines[first : first + 25]))
    sent = sum(len(run.stats.latencies[k]) for k in MIX) or 1
    result = {
        "p50_ms": rows["overall"]["p50"],
        "p99_ms": rows["overall"]["p99"],
        "errors": rows["overall"]["errors"] + rows.get("long-poll", {}).get("errors", 0),
        "web_cpu_ms": run.cpu["web"] * 1000 / sent,
        "db_cpu_ms": run.cpu["db"] * 1000 / sent,
        "long_polls": rows.get("long-poll", {}).get("requests", 0),
        **backends.summary(run.samples[0][0], run.samples[-1][0]),
        "log_problems": len(problems),
        "per_endpoint": rows,
    }
    return result, run.load


# --- the outage, per candidate -----------------------------------------------------------------------------


@dataclass
class Sample:
    name: str
    started: float
    ended: float
    ok: bool
    detail: str


@dataclass
class Trace:
    samples: list[Sample] = field(default_factory=list)
    outages: list[tuple[str, float, float]] = field(default_factory=list)  # (what, server away from, back at)
    paused: bool = False
    done: bool = False


class Cluster:
    """pg_ctl on the cluster Services started (as the postgres user when we are root, as Services does)."""

    def __init__(self, services: Services, url: str) -> None:
        assert services.pg_data is not None, "the outage needs the throw-away cluster: unset DATABASE_URL"
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        port = url.rsplit(":", 1)[1].split("/")[0]
        # The options Services.postgres started the server with.
        self.opts = f"-p {port} -k '{services.work}' -c listen_addresses=127.0.0.1 -c max_connections=200"
        self.data, self.log = services.pg_data, services.work / "pg.log"

    def ctl(self, action: str) -> None:
        cmd = f"'{self.bin}/pg_ctl' -D '{self.data}' -l '{self.log}' -m fast -w -o \"{self.opts}\" {action}"
        full = ["su", "postgres", "-s", "/bin/sh", "-c", cmd] if os.geteuid() == 0 else ["/bin/sh", "-c", cmd]
        subprocess.run(full, check=True, stdout=subprocess.DEVNULL, timeout=60)


async def outage_calls(load: Load, trace: Trace, rate: float) -> None:
    """The runtime's calls at `rate`, open loop, each in its own task; none while paused."""
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[None]] = set()

    async def fire(kind: str) -> None:
        started = loop.time()
        try:
            ok, detail = await asyncio.wait_for(getattr(load, kind)(), 15)
        except Exception as exc:  # a timeout or a dropped connection: a failure too
            ok, detail = False, repr(exc)
        trace.samples.append(Sample(kind, started, loop.time(), ok, detail))

    start = loop.time()
    for i in itertools.count():
        if trace.done:
            break
        await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
        if not trace.paused:
            task = asyncio.create_task(fire(OUTAGE_KINDS[i % len(OUTAGE_KINDS)]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(set(tasks))


async def outage_waiter(load: Load, trace: Trace, request_id: str, wait: int) -> None:
    """A runtime long-polling a request nobody decides, again and again (its own keep-alive connection)."""
    loop = asyncio.get_running_loop()
    conn = load.api.take()
    while not trace.done:
        if trace.paused:
            await asyncio.sleep(0.1)
            continue
        started = loop.time()
        try:
            path = f"/api/v1/approvals/{request_id}?wait={wait}"
            status, data = await asyncio.wait_for(conn.request("GET", path, b"", load.runtime), wait + 15)
            ok, detail = status == 200, f"{status} {data[:200]!r}"
        except Exception as exc:
            conn.close()
            ok, detail = False, repr(exc)
        trace.samples.append(Sample("long-poll", started, loop.time(), ok, detail))
        if not ok:
            await asyncio.sleep(0.1)  # a runtime backs off a little before it asks again
    conn.close()


async def outages(cluster: Cluster, trace: Trace, down: float) -> None:
    """A restart under load, a stop of `down` seconds under load, then a restart while nobody calls."""
    loop = asyncio.get_running_loop()

    async def ctl(what: str, *actions: str, between: float = 0.0) -> None:
        away = loop.time()
        for n, action in enumerate(actions):
            if n:
                await asyncio.sleep(between)
            await asyncio.to_thread(cluster.ctl, action)
        trace.outages.append((what, away, loop.time()))

    await asyncio.sleep(4)
    await ctl("restart under load", "restart")
    await asyncio.sleep(6)
    await ctl(f"stopped {down:.0f} s under load", "stop", "start", between=down)
    await asyncio.sleep(6)
    trace.paused = True  # the in-flight long-polls (wait=3) end, then nobody calls: every held connection idles
    await asyncio.sleep(4)
    await ctl("restart while idle", "restart")
    trace.paused = False
    await asyncio.sleep(6)
    trace.done = True


def outage_summary(trace: Trace) -> list[dict[str, Any]]:
    """Per outage, over the calls from its start until RECOVERY s after the server was back (long-polls apart)."""
    rows = []
    for what, away, back in trace.outages:
        touching = [s for s in trace.samples if s.started < back + RECOVERY and s.ended > away]
        inside = [s for s in touching if s.name != "long-poll"]
        polls = [s for s in touching if s.name == "long-poll"]
        failed = [s for s in inside if not s.ok]
        after = [s for s in trace.samples if s.ok and s.started >= back and s.name != "long-poll"]
        answers = Counter(
            "503 JSON" if s.detail.startswith("503 ") and "database is unavailable" in s.detail else s.detail[:60]
            for s in failed
        )
        rows.append(
            {
                "outage": what,
                "away_s": back - away,
                "requests": len(inside),
                "failed": len(failed),
                "answers": dict(answers),
                "slowest_failure_s": max((s.ended - s.started for s in failed), default=0.0),
                "slowest_s": max((s.ended - s.started for s in inside), default=0.0),
                "long_polls": len(polls),
                "long_polls_failed": sum(1 for s in polls if not s.ok),
                "long_poll_answers": dict(Counter(s.detail[:4] for s in polls if not s.ok)),
                "first_ok_after_back_s": min((s.ended - back for s in after), default=float("nan")),
                "last_failure_after_back_s": max((s.ended - back for s in failed), default=float("nan")),
            }
        )
    return rows


async def measure_outage(web: dict[str, Any], load: Load, args: argparse.Namespace) -> list[dict[str, Any]]:
    trace = Trace()
    ok, detail = await load.evaluate()  # a pending request the waiters long-poll (nobody decides it)
    assert ok, detail
    pending = load.pending.pop().id
    cluster = Cluster(web["services"], web["env"]["DATABASE_URL"])
    await asyncio.gather(
        outage_calls(load, trace, args.outage_rate),
        *(outage_waiter(load, trace, pending, 3) for _ in range(2)),
        outages(cluster, trace, args.down),
    )
    rows = outage_summary(trace)
    for row in rows:
        print(
            f"  {row['outage']:<22} away {row['away_s']:.1f} s: {row['failed']}/{row['requests']} failed "
            f"{row['answers']}; slowest failure {row['slowest_failure_s']:.2f} s, "
            f"slowest call {row['slowest_s']:.2f} s; long-polls {row['long_polls_failed']}/{row['long_polls']} "
            f"failed {row['long_poll_answers']}; "
            f"back: first success {row['first_ok_after_back_s']:+.2f} s, last failure "
            f"{row['last_failure_after_back_s']:+.2f} s"
        )
    return rows


# --- rounds and the table ------------------------------------------------------------------------------


def table(results: list[dict[str, Any]]) -> None:
    heads = ("p50 ms", "p99 ms", "err", "web ms/req", "db ms/req", "conns mean", "max", "backends", "sess/s")
    print(f"\n  {'candidate':<11} {'round':>5} " + " ".join(f"{h:>10}" for h in heads))
    keys = ("p50_ms", "p99_ms", "errors", "web_cpu_ms", "db_cpu_ms", "web_conns_mean", "web_conns_max")
    for r in sorted(results, key=lambda r: (r["candidate"], r["round"])):
        load = r["load"]
        cells = [load.get(k, float("nan")) for k in (*keys, "backends_max", "sessions_per_s")]
        print(f"  {r['candidate']:<11} {r['round']:>5} " + " ".join(f"{c:>10.1f}" for c in cells))
    print("\n  outages (failed/requests, slowest failure s, first success and last failure after the server was back)")
    for r in sorted(results, key=lambda r: (r["candidate"], r["round"])):
        parts = [
            f"{o['failed']}/{o['requests']} {o['slowest_failure_s']:.2f} {o['first_ok_after_back_s']:+.2f} "
            f"{o['last_failure_after_back_s']:+.2f}"
            for o in r["outage"]
        ]
        print(f"  {r['candidate']:<11} {r['round']:>5}  " + " | ".join(parts))


async def one(app: dict[str, Any], args: argparse.Namespace, name: str, round_no: int) -> dict[str, Any]:
    web = start_web(app, args, name, round_no)
    print(f"\n=== round {round_no}: {name} ({candidate_env(name, args.threads)}) on port {web['port']} ===", flush=True)
    try:
        load_result, load = await measure_load(web, args)
        outage = await measure_outage(web, load, args) if args.outage else []
    finally:
        stop([web["server"]])
    booted = web["log"].read_text(errors="replace").count("Booting worker")
    return {"candidate": name, "round": round_no, "load": load_result, "outage": outage, "workers_booted": booted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--candidates", default=",".join(CANDIDATES), help="comma-separated, of " + ", ".join(CANDIDATES)
    )
    parser.add_argument("--seconds", type=float, default=45.0, help="measured seconds of load per run (default 45)")
    parser.add_argument("--rate", type=float, default=40.0, help="mixed requests per second (default 40)")
    parser.add_argument("--waiters", type=int, default=6, help="concurrent long-polls during the load (default 6)")
    parser.add_argument("--wait", type=int, default=30, help="their ?wait= seconds (default 30)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (the Procfile's default 2)")
    parser.add_argument("--threads", type=int, default=8, help="gthread threads (the Procfile's default 8)")
    parser.add_argument("--outage-rate", type=float, default=20.0, help="runtime calls/s during the outages")
    parser.add_argument("--down", type=float, default=4.0, help="seconds PostgreSQL stays stopped (default 4)")
    parser.add_argument("--no-outage", dest="outage", action="store_false", help="only the load")
    args = parser.parse_args()
    # What load_mixed.start_app and drive read besides.
    args.worker_class, args.warmup, args.probe, args.stock_seconds = "gthread", 8.0, 0, 5.0
    args.max_connections, args.window, args.embed_timeout = 256, 5.0, 600.0
    names = args.candidates.split(",")
    if unknown := set(names) - set(CANDIDATES):
        sys.exit(f"unknown candidates: {', '.join(sorted(unknown))}")
    if any(n.startswith("pool") for n in names) and importlib.util.find_spec("psycopg_pool") is None:
        sys.exit("the pool candidates need psycopg's pool: pip install psycopg-pool (or --candidates fresh,persistent)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    services, procs = Services(), []
    results: list[dict[str, Any]] = []
    try:
        app = start_app(services, args, procs)
        stop([procs.pop()])  # start_app's gunicorn: each candidate starts its own
        app |= {"services": services, "celery_pids": [p.pid for p in procs]}
        for round_no in range(1, args.rounds + 1):
            shift = (round_no - 1) % len(names)
            for name in names[shift:] + names[:shift]:
                results.append(asyncio.run(one(app, args, name, round_no)))
        stop(procs)
        table(results)
        audit = manage(app["env"], "verify_audit_log").strip()
        print(f"  audit: {audit}")
        out = ROOT / "bench" / "out"
        out.mkdir(exist_ok=True)
        (out / "connections.json").write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    finally:
        stop(procs)
        services.stop()


if __name__ == "__main__":
    if not shutil.which("pg_ctl", path=":".join(glob.glob("/usr/lib/postgresql/*/bin"))):
        sys.exit("no PostgreSQL server binaries (apt-get install postgresql)")
    main()
