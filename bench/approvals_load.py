"""Benchmark: the approvals API under gunicorn on PostgreSQL, driven from a load generator on loopback.

Phases (each --seconds long, closed loop: every connection sends its next request when the last answered):
  evaluate  POST /api/v1/approvals/evaluate, every call suspending (tier high) with a fresh idempotency key
  bare      POST /api/bench/bare-insert: a bare Django view inserting the same row (no token, policy, audit),
            behind the same middleware as the API
  flow      the whole life of a call: evaluate → GET → decide (the approver's htmx POST) → consume

evaluate and bare are driven by wrk when it is installed (apt-get install wrk; --client python otherwise), the
flow by this script's own client, which reads each answer to send the next request.
Reports requests/s, p50/p90/p99/max latency, errors and the CPU each part (gunicorn, PostgreSQL, the load
generator) spent per request for each phase, and the evaluate/bare ratio.
Starts its own throw-away PostgreSQL (initdb, as the postgres user when run as root) unless DATABASE_URL
names one, and its own Redis (the broker notifications are queued to) unless REDIS_URL is set.

    .venv/bin/python bench/approvals_load.py [--seconds 60] [--concurrency 12] [--workers 3]
        [--worker-class gthread|sync] [--threads 2] [--phases evaluate,bare,flow] [--client wrk|python]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from _load import (
    ROOT,
    Connection,
    CpuMeter,
    Services,
    add_gunicorn_arguments,
    cpu_delta,
    free_port,
    gunicorn_options,
    manage,
    percentile,
    production_env,
    sign_in,
    start_gunicorn,
)

PATIENT = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"


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


def stats_rows(stats: Stats, seconds: float) -> dict[str, dict[str, float]]:
    return {
        name: {
            "requests": len(values),
            "rps": len(values) / seconds,
            "p50": statistics.median(values) * 1000,
            "p90": percentile(values, 90) * 1000,
            "p99": percentile(values, 99) * 1000,
            "max": max(values) * 1000,
            "errors": stats.errors.get(name, 0),
        }
        for name, values in stats.latencies.items()
    }


def report(
    phase: str, rows: dict[str, dict[str, float]], seconds: float, used: dict[str, float], samples: list[str]
) -> dict[str, Any]:
    sent = sum(row["requests"] for row in rows.values())
    wall = used.pop("wall")
    machine = wall * (os.cpu_count() or 1)  # CPU seconds the machine had; the rest went to other processes or idle
    cpu_ms = {part: cpu * 1000 / sent for part, cpu in used.items()}
    parts = ", ".join(f"{part} {ms:.2f}" for part, ms in cpu_ms.items())
    print(f"\n{phase}: {seconds:.0f} s")
    columns = ("requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms")
    print(f"  {'endpoint':<10} " + " ".join(f"{c:>9}" for c in columns) + " errors")
    for name, row in rows.items():
        print(
            f"  {name:<10} {row['requests']:>9} {row['rps']:>9.1f} {row['p50']:>9.1f} {row['p90']:>9.1f} "
            f"{row['p99']:>9.1f} {row['max']:>9.1f} {row['errors']}"
        )
    for sample in samples:
        print(f"  error sample: {sample}")
    print(f"  CPU ms per request: {parts}; the measured parts used {sum(used.values()) / machine:.0%} of the machine")
    return {"endpoints": rows, "cpu_ms_per_request": cpu_ms}


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
                status, body = await conn.request("POST", "/api/bench/bare-insert", evaluate_body(key), auth)
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


# wrk (C, one thread, epoll) drives the single-endpoint phases: at ~25 µs of CPU per request instead of the
# Python client's ~300 µs it leaves the two cores to the server, as a runtime on another machine would.
WRK_SCRIPT = r"""
local threads = {}
function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  prefix, counter, errors, sample = args[1] .. "-" .. id .. "-", 0, 0, ""
end
function request()
  counter = counter + 1
  local key = prefix .. counter
  return wrk.format("POST", PATH, HEADERS, string.format(TEMPLATE, key, key))
end
function response(status, headers, body)
  if status ~= 201 then
    errors = errors + 1
    if sample == "" then sample = status .. " " .. string.sub(body, 1, 200) end
  end
end
function done(summary, latency, requests)
  local errs, sample_out = 0, ""
  for _, t in ipairs(threads) do
    errs = errs + t:get("errors")
    if sample_out == "" then sample_out = t:get("sample") end
  end
  local e = summary.errors
  io.write(string.format("WRK %d %d %d %f %f %f %f %d\n", summary.requests, summary.duration, errs,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect + e.read + e.write + e.timeout))
  io.write("SAMPLE " .. sample_out .. "\n")
end
"""


def drive_wrk(port: int, phase: str, seconds: float, concurrency: int, token: str) -> tuple[dict[str, Any], list[str]]:
    name, path = ("bare", "/api/bench/bare-insert") if phase == "bare" else ("evaluate", "/api/v1/approvals/evaluate")
    template = evaluate_body("@KEY@").decode().replace("%", "%%").replace("@KEY@", "%s")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    lua = "\n".join(
        [
            f"PATH = {json.dumps(path)}",
            f"TEMPLATE = {json.dumps(template)}",
            "HEADERS = {" + ", ".join(f"[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()) + "}",
            WRK_SCRIPT,
        ]
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(lua)
    try:
        cmd = ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds:.0f}s", "--timeout", "10s", "-s", script.name]
        cmd += [f"http://127.0.0.1:{port}", "--", f"{phase}-{uuid.uuid4().hex[:8]}"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    finally:
        os.unlink(script.name)
    line = next(line for line in done.stdout.splitlines() if line.startswith("WRK "))
    requests, duration_us, errors, p50, p90, p99, top, socket_errors = line.split()[1:]
    sample = next((line[7:] for line in done.stdout.splitlines() if line.startswith("SAMPLE ")), "")
    row = {
        "requests": int(requests),
        "rps": int(requests) / (int(duration_us) / 1e6),
        "p50": float(p50) / 1000,
        "p90": float(p90) / 1000,
        "p99": float(p99) / 1000,
        "max": float(top) / 1000,
        "errors": int(errors) + int(socket_errors),
    }
    return {name: row}, [f"{name}: {sample}"] if sample.strip() else []


# --- setup and main ------------------------------------------------------------------------------------


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
    parser.add_argument("--concurrency", type=int, default=12, help="connections driving the load (default 12)")
    # Measured on 2 cores: gthread keeps connections alive (sync workers close each one: +0.4 ms of CPU per call
    # on the client and the server), and 3 processes × 2 threads kept both cores busy with the least GIL contention
    # (4 × 1: 293/s, 2 × 8 as in the Procfile: 245/s, 3 × 2: 289–334/s in the same hour).
    add_gunicorn_arguments(parser, workers=3, threads=2)
    parser.add_argument("--phases", default="evaluate,bare,flow", help="comma-separated: evaluate, bare, flow")
    parser.add_argument(
        "--client",
        choices=("wrk", "python"),
        default="wrk" if shutil.which("wrk") else "python",
        help="load generator for evaluate and bare: wrk (default when installed: apt-get install wrk) or python",
    )
    args = parser.parse_args()

    # A terminated run still stops what it started (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    services = Services()
    server = None
    try:
        env = production_env(services)
        manage(env, "migrate", "--no-input", "-v0")
        manage(env, "collectstatic", "--no-input", "-v0")
        manage(env, "load_demo")
        password = uuid.uuid4().hex
        token = manage(env, "shell", "-c", SETUP.format(password=password)).split("TOKEN=")[1].strip()
        port = free_port()
        server_env = {**env, "DJANGO_SETTINGS_MODULE": "approvals_bench_settings"}
        server = start_gunicorn(
            server_env,
            port,
            [
                "--pythonpath",
                str(ROOT / "bench"),
                *gunicorn_options(args),
                "--keep-alive",
                "30",
                "--log-level",
                "warning",
            ],
        )
        print(
            f"gunicorn: {args.workers} {args.worker_class} workers × {args.threads} threads on 127.0.0.1:{port}; "
            f"PostgreSQL {env['DATABASE_URL'].rsplit('@', 1)[-1]}; broker {env['REDIS_URL'] or 'none'}; "
            f"{args.concurrency} connections; {os.cpu_count()} CPUs"
        )
        cpu = CpuMeter({"web": [server.pid], "db": services.postgres_pids()})
        # Warm every worker (imports, connections, caches) before measuring.
        asyncio.run(drive(port, "flow", 3, args.concurrency, token, password))
        results: dict[str, Any] = {}
        for phase in [p.strip() for p in args.phases.split(",") if p.strip()]:
            before = cpu.read()
            if args.client == "wrk" and phase != "flow":  # the flow reads each answer to send the next request
                rows, samples = drive_wrk(port, phase, args.seconds, args.concurrency, token)
            else:
                stats = asyncio.run(drive(port, phase, args.seconds, args.concurrency, token, password))
                rows, samples = stats_rows(stats, args.seconds), stats.samples
            results[phase] = report(phase, rows, args.seconds, cpu_delta(before, cpu.read()), samples)
        if "evaluate" in results and "bare" in results:
            ratio = results["evaluate"]["endpoints"]["evaluate"]["rps"] / results["bare"]["endpoints"]["bare"]["rps"]
            print(f"\nevaluate / bare insert throughput: {ratio:.2f} (same run, same server)")
        errors = sum(row["errors"] for phase in results.values() for row in phase["endpoints"].values())
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
