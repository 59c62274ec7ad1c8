"""PostgreSQL restarted, and then stopped for a few seconds, under a steady load on gunicorn.

The app runs as production runs it (gunicorn, DEBUG off, persistent connections: CONN_MAX_AGE=60) on a
PostgreSQL cluster of its own, which we restart (`pg_ctl restart -m fast`) and later stop and start again while
a few clients drive the runtime's calls: approvals evaluate + GET, the owner lookup, a card bundle. Before and
after each outage every request succeeds; during one, each fails cleanly and quickly (an HTTP error, never a
hang or a dropped connection) and no gunicorn worker dies; after it, the persistent connections are replaced
(health-checked) instead of failing the first request of every worker. Nothing is lost: every evaluate retried
with its idempotency key is answered, each request and its audit event are stored once, the chain verifies.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import subprocess
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import PY, ROOT, PostgresCluster, RedisServer, free_port, manage, requires_services, service_env

pytestmark = requires_services

CLIENTS = 3
PHASE_SECONDS = float(os.environ.get("FAULT_PG_PHASE_SECONDS", "4"))
DOWN_SECONDS = float(os.environ.get("FAULT_PG_DOWN_SECONDS", "4"))
# After the server is back, every request succeeds again within this.
RECOVERY_SECONDS = 3.0
# A request while the database is away is answered within this (no hang on a dead socket).
FAIL_FAST_SECONDS = 3.0
PATIENT = "3f2a61d0-5b7c-4e8a-9d1e-0c4b2a7f9c1d"


@dataclass
class Sample:
    name: str
    started: float
    ended: float
    status: int | None  # None: no HTTP answer at all (refused, reset, timed out)
    ok: bool
    detail: str = ""
    key: str = ""
    body: bytes = b""

    @property
    def seconds(self) -> float:
        return self.ended - self.started


class Load:
    """A few clients, each looping evaluate → GET → owner lookup → card bundle, one connection per request
    (gunicorn's sync workers close each one)."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.samples: list[Sample] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.running = threading.Event()
        self.running.set()
        self.threads = [threading.Thread(target=self.client, args=(n,), daemon=True) for n in range(CLIENTS)]

    def call(self, name: str, method: str, path: str, expect: int, body: Any = None, key: str = "") -> Sample:
        started = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        try:
            conn.request(method, path, json.dumps(body) if body is not None else None, headers)
            response = conn.getresponse()
            data = response.read()
            kind = response.getheader("Content-Type", "")
            sample = Sample(name, started, time.monotonic(), response.status, response.status == expect, key=key)
            sample.detail = f"{kind} {data[:200]!r}"
            sample.body = data if sample.ok and name == "evaluate" else b""
        except OSError as exc:
            sample = Sample(name, started, time.monotonic(), None, False, repr(exc), key=key)
        finally:
            conn.close()
        with self.lock:
            self.samples.append(sample)
        if not sample.ok:
            time.sleep(0.1)  # a client backs off a little before its next call
        return sample

    def evaluate(self, key: str) -> Sample:
        body = {
            "tool": "prescribeMedication",
            "profile": "clinical-production",
            "dispatchMode": "supervised",
            "runId": "fault-run",
            "requestedBy": "dr.house",
            "patientRef": PATIENT,
            "args": {"patientId": PATIENT, "drug": "Amoxicillin", "dose": "500 mg", "key": key},
            "idempotencyKey": key,
        }
        return self.call("evaluate", "POST", "/api/v1/approvals/evaluate", 201, body, key)

    def client(self, n: int) -> None:
        i = 0
        while not self.stop.is_set():
            self.running.wait()
            i += 1
            key = f"fault-{n}-{i}-{uuid.uuid4().hex[:8]}"
            evaluated = self.evaluate(key)
            if evaluated.ok:
                request_id = json.loads(evaluated.body)["request"]["id"]
                self.call("get", "GET", f"/api/v1/approvals/{request_id}", 200)
            self.call("lookup", "GET", "/api/v1/owners/lookup?q=prescribe_medication", 200)
            self.call("bundle", "GET", "/api/v1/cards/de.json", 200)

    def run(self) -> None:
        for t in self.threads:
            t.start()

    def pause(self) -> None:
        """Quiet: the clients finish the cycle they are in and wait (the app keeps its idle connections)."""
        self.running.clear()
        time.sleep(1.0)

    def finish(self) -> list[Sample]:
        self.stop.set()
        self.running.set()
        for t in self.threads:
            t.join(timeout=30)
        return sorted(self.samples, key=lambda s: s.started)


SETUP = """
from pathlib import Path
from django.core.management import call_command
from catalog.cards.services.demo import cards_demo_load
from catalog.models import ApiToken
from django.contrib.auth.models import Group, User
from catalog.core import roles
from catalog.services.imports import catalog_import
from catalog.services.signoff import revision_review
call_command("migrate", "--no-input", verbosity=0)
revision = catalog_import(raw=Path("catalog/demo/condor.json").read_bytes(), via="fault setup").revision
# Signed off by two safety officers: the clinical profile the load evaluates under is served what is in effect.
officers = Group.objects.get_or_create(name=roles.SAFETY_OFFICER)[0]
for name in ("officer-one", "officer-two"):
    officer = User.objects.create(username=name)
    officer.groups.add(officers)
    if revision_review(revision_id=revision.pk, reviewer=officer, decision="approved", comment="setup").in_effect:
        break
cards_demo_load()
raw = ApiToken.generate()
ApiToken.objects.create(name="fault-runtime", prefix=raw[:10], token_hash=ApiToken.hash(raw),
    scopes=["approvals", "catalog:read", "cards"])
print(raw)
"""


def deploy(cluster: PostgresCluster, redis: RedisServer, workdir: Path) -> tuple[dict[str, str], str]:
    """The production deploy steps on the throw-away cluster (migrate, collectstatic, a catalog, the card
    strings, a runtime token: one process start each for the database and the static files, side by side)."""
    env = service_env(
        DATABASE_URL=cluster.url(),
        REDIS_URL=redis.url,
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="false",  # plain HTTP on loopback: TLS would end in front of gunicorn
        STATIC_ROOT=str(workdir / "static"),
        CONN_MAX_AGE="60",
    )
    collect = subprocess.Popen(
        [PY, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=ROOT, env=env, stderr=subprocess.PIPE
    )
    token = shell(env, SETUP)
    _, err = collect.communicate(timeout=300)
    assert collect.returncode == 0, err[-3000:]
    return env, token


def start_gunicorn(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [
            *(str(Path(PY).parent / "gunicorn"), "condor_admin.wsgi:application", "--bind", f"127.0.0.1:{port}"),
            *("--workers", "2", "--worker-class", "sync", "--timeout", "30", "--log-level", "info"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/login/")
            conn.getresponse().read()
            conn.close()
            return server
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)


def shell(env: dict[str, str], code: str) -> str:
    return manage(env, "shell", "-c", code).stdout.strip().splitlines()[-1]


def test_requests_fail_cleanly_while_postgres_is_away_and_all_succeed_right_after(
    postgres_cluster: PostgresCluster, redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env, token = deploy(postgres_cluster, redis_server, tmp_path)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    server = start_gunicorn(env, port, log)
    load = Load(port, token)
    outages: list[tuple[str, float, float]] = []
    try:
        load.run()
        time.sleep(PHASE_SECONDS)
        started = time.monotonic()
        postgres_cluster.restart("fast")
        outages.append(("pg_ctl restart -m fast", started, time.monotonic()))
        time.sleep(PHASE_SECONDS)
        started = time.monotonic()
        postgres_cluster.stop("fast")
        time.sleep(DOWN_SECONDS)
        postgres_cluster.start()
        outages.append((f"stopped {DOWN_SECONDS:.0f} s", started, time.monotonic()))
        time.sleep(PHASE_SECONDS)
        # A restart while nobody calls: each worker's persistent connection dies unseen, and the next request
        # must reconnect (health check) rather than fail on the dead socket.
        load.pause()
        started = time.monotonic()
        postgres_cluster.restart("fast")
        outages.append(("idle restart", started, time.monotonic()))
        load.running.set()
        time.sleep(PHASE_SECONDS)
    finally:
        samples = load.finish()
        alive = server.poll() is None
        if alive:  # the evaluates that failed, again, with the same idempotency keys
            retry = Load(port, token)
            retried = [retry.evaluate(s.key) for s in samples if s.name == "evaluate" and not s.ok]
        server.terminate()
        server.wait(timeout=30)
    assert alive, log.read_text()[-3000:]

    # Phases: before, each outage (from its start until RECOVERY_SECONDS after the server was back), between.
    def phase(s: Sample) -> str:
        for n, (_, down, up) in enumerate(outages):
            if s.started < up + RECOVERY_SECONDS and s.ended > down:
                return f"outage {n + 1}"
            if s.ended <= down:
                return "before" if n == 0 else f"after outage {n}"
        return f"after outage {len(outages)}"

    table: dict[str, Counter[str]] = {}
    for s in samples:
        table.setdefault(phase(s), Counter())["ok" if s.ok else "failed"] += 1
    recoveries, first_answers = [], []
    for n, (_, _, up) in enumerate(outages):
        failed = [s for s in samples if not s.ok and phase(s) == f"outage {n + 1}"]
        recoveries.append(max((s.ended - up for s in failed), default=0.0))
        first_answers.append(min((s.ended - up for s in samples if s.ok and s.started >= up), default=99.0))
    failures = [s for s in samples if not s.ok]
    with capsys.disabled():
        print(f"\n[fault postgres] {CLIENTS} clients, gunicorn 2 sync workers, CONN_MAX_AGE=60")
        for name, counts in table.items():
            print(f"  {name:<16} ok {counts['ok']:>5}  failed {counts['failed']:>4}")
        for (what, down, up), recovery, first in zip(outages, recoveries, first_answers, strict=True):
            print(
                f"  {what}: server away {up - down:.1f} s; once back, first success after {first:.2f} s, "
                f"last failure {recovery:+.2f} s"
            )
        print(f"  failure answers: {Counter((s.status, s.detail[:40]) for s in failures).most_common(4)}")
        print(
            f"  slowest failure {max((s.seconds for s in failures), default=0):.2f} s, slowest request "
            f"{max(s.seconds for s in samples):.2f} s; {len(retried)} failed evaluates retried with their keys: "
            f"{dict(Counter(s.status for s in retried))}"
        )

    for name, counts in table.items():
        if not name.startswith("outage"):
            assert counts["failed"] == 0, (name, [s for s in failures if phase(s) == name][:5])
        assert counts["ok"] > 0, f"no request succeeded in {name}: {table}"
    assert table["outage 2"]["failed"] > 0, "no request met the stopped server: the outage tested nothing"
    assert table["outage 3"]["failed"] == 0, [s for s in failures if phase(s) == "outage 3"][:5]
    # Failing cleanly: an HTTP answer, soon, that says so in JSON.
    unclean = [s for s in failures if s.status is None or s.seconds > FAIL_FAST_SECONDS]
    assert not unclean, unclean[:5]
    assert all(s.status == 503 and "application/json" in s.detail for s in failures), failures[:5]
    assert all(r <= RECOVERY_SECONDS for r in recoveries), recoveries
    assert max(s.seconds for s in samples) < 10, "a request hung"
    booted = log.read_text().count("Booting worker")
    assert booted == 2, f"gunicorn (re)started {booted} workers: a crash loop?\n" + log.read_text()[-3000:]

    # Nothing lost: every evaluate that failed is answered when retried with its key (201, or 200 if it had
    # committed before the answer was lost); afterwards each key is stored exactly once, with its audit event.
    keys = {s.key for s in samples if s.name == "evaluate"}
    assert all(s.status in (200, 201) for s in retried), retried[:5]
    stored = shell(env, LOST)
    assert stored == f"{len(keys)} {len(keys)} {len(keys)} True", (stored, len(keys))


# Run against the throw-away cluster once the load is over: what was stored, and the audit chain.
LOST = """
from approvals.models import ApprovalRequest
from catalog.models import AuditEvent
from catalog.core.audit import audit_verify
requests = ApprovalRequest.objects.filter(idempotency_key__startswith="fault-")
ids = [str(pk) for pk in requests.values_list("pk", flat=True)]
suspended = AuditEvent.objects.filter(action="approvals.request.suspended", object_id__in=ids)
verified = audit_verify()
assert verified.ok, verified.reason
print(requests.count(), requests.values("idempotency_key").distinct().count(), suspended.count(), verified.ok)
"""
