"""Redis stopped for half a minute while manifests are imported, and while people sign in and the frontend
fetches card bundles.

A real Celery worker with its beat runs against a Redis of our own; we stop that Redis (losing every queued
message: no persistence), import two changed manifests with `manage.py import_catalog` while it is down, and
start it again on the same port. The imports must commit at their usual speed (the after-commit enqueue gives
up within about a second and logs it), the worker must survive the outage, and the beat's sweep must bring
every changed tool a current vector, with no vector row duplicated. Nothing may be lost: every revision, every
audit event, every vector; the audit chain verifies.

Sign-in and bundles run on gunicorn as production runs it (DEBUG off, the Procfile's gthread workers) against a
Redis of our own that is stopped while clients sign in, open a page, sign out and fetch bundles, and while CI
imports a manifest through the API: not one 500, every answer the right one (the sign-in throttle counts in
process memory then, sessions come from their table, bundles are built from the rows with the same bytes and
ETag, the import commits). Nothing is lost: the revision and its audit event are there, and the audit chain
verifies against the checkpoints written before and after the outage.
"""

from __future__ import annotations

import copy
import http.client
import json
import os
import re
import secrets
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Count

from catalog.cards.services.demo import cards_demo_load
from catalog.cards.services.translations import locale_add
from catalog.core.audit import Actor, audit_seal, audit_verify, audit_verify_checkpoints
from catalog.domain.manifest import manifest_sha256
from catalog.models import AuditEvent, CatalogRevision, Tool, ToolEmbedding
from catalog.rag.selectors.siblings import systems_awaiting_siblings
from catalog.rag.selectors.vectors import embedding_status

from .conftest import (
    PY,
    ROOT,
    RedisServer,
    free_port,
    requires_services,
    service_env,
    shared_database_url,
    wait_for,
)

pytestmark = requires_services

DEMO = ROOT / "catalog" / "demo" / "condor.json"
# The figure; shorter locally with FAULT_REDIS_DOWN_SECONDS=5.
DOWN_SECONDS = float(os.environ.get("FAULT_REDIS_DOWN_SECONDS", "30"))
SWEEP_SECONDS = 3.0
# After Redis is back: the worker's reconnect back-off (kombu: 2 s, +2 s a try) plus a sweep plus embedding.
RECOVERY_LIMIT = SWEEP_SECONDS + 45


def changed_manifests() -> tuple[list[dict[str, Any]], set[str]]:
    """The demo manifest (r1), then r2 (five texts reworded, one tool added) and r3 (one of those removed,
    keywords of three tools changed); and the live tools whose embedded text r2 or r3 changed."""
    v1 = json.loads(DEMO.read_text())
    v2 = copy.deepcopy(v1)
    v2["source"]["commit"] = "outage-2"
    for tool in v2["tools"][:5]:
        tool["ragDescription"] = tool["ragDescription"].replace("PRODUCES:", "PRODUCES (revised):")
    added = copy.deepcopy(next(t for t in v2["tools"] if t["id"] == "listVisits"))
    added.update(id="listVisitNotes", aliases=[], ragDescription=added["ragDescription"] + " Notes included.")
    v2["tools"].append(added)
    v3 = copy.deepcopy(v2)
    v3["source"]["commit"] = "outage-3"
    v3["tools"] = [t for t in v3["tools"] if t["id"] != "getPatientContacts"]
    for tool in v3["tools"][10:13]:
        tool["ragKeywords"]["en"] = [*tool["ragKeywords"]["en"], "outage keyword"]
    changed = {t["id"] for t in v2["tools"][:5]} | {"listVisitNotes"} | {t["id"] for t in v3["tools"][10:13]}
    return [v1, v2, v3], changed - {"getPatientContacts"}


IMPORTER = "outage-importer"  # once a clinical profile exists, every CLI import names its importer


def import_manifest(env: dict[str, str], path: Path) -> tuple[float, str]:
    """`manage.py import_catalog` in its own process; (wall seconds, its stderr)."""
    started = time.monotonic()
    done = subprocess.run(
        [PY, "manage.py", "import_catalog", str(path), "--as", IMPORTER],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    wall = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return wall, done.stderr


def start_worker(env: dict[str, str], tmp_path: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *(PY, "-m", "celery", "-A", "condor_admin", "worker", "--beat", "--pool=solo", "--loglevel=info"),
            *("-n", f"faults-{os.getpid()}-{time.monotonic_ns()}@%h", "-s", str(tmp_path / "beat-schedule")),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
    )


def all_current() -> bool:
    """Every vector current and its sibling findings refreshed: the worker has nothing left in hand (kombu's Redis
    transport ends a worker that holds an unacknowledged message when the broker drops)."""
    status = embedding_status(system="condor")
    return status.stale == status.missing == 0 and "condor" not in systems_awaiting_siblings()


def test_imports_commit_while_redis_is_down_and_the_sweep_embeds_them_after(
    transactional_db: Any, tmp_path: Path, redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    get_user_model().objects.create(username=IMPORTER)
    env = service_env(
        DATABASE_URL=shared_database_url(),
        REDIS_URL=redis_server.url,
        CONDOR_EMBED_SWEEP_EVERY_SECONDS=str(SWEEP_SECONDS),
        LOG_LEVEL="INFO",
    )
    manifests, changed = changed_manifests()
    paths = []
    for n, manifest in enumerate(manifests, start=1):
        paths.append(tmp_path / f"condor-r{n}.json")
        paths[-1].write_text(json.dumps(manifest))

    # r1 with Redis up: the usual import time, its embedding tasks wait in Redis for the worker.
    wall_up, _ = import_manifest(env, paths[0])
    log = tmp_path / "worker.log"
    worker = start_worker(env, tmp_path, log)
    try:
        wait_for(lambda: worker.poll() is None and all_current(), timeout=180)
        assert worker.poll() is None, log.read_text()[-3000:]
        vectors_before = dict(ToolEmbedding.objects.values_list("tool__declared_id", "text_sha256"))

        redis_server.stop()
        stopped = time.monotonic()
        walls_down = []
        for path in paths[1:]:
            wall, stderr = import_manifest(env, path)
            walls_down.append(wall)
            assert "could not queue" in stderr, stderr[-3000:]  # it tried, gave up, and said so
        # Commits as fast as with Redis up (the same process start-up and import work; r1 was the bigger one),
        # not after a 20-second retry loop.
        assert max(walls_down) < min(wall_up + 5.0, 15.0), (wall_up, walls_down)
        assert not all_current()  # nothing embedded them: the broker is down

        time.sleep(max(0.0, DOWN_SECONDS - (time.monotonic() - stopped)))
        assert worker.poll() is None, "the worker died while Redis was down:\n" + log.read_text()[-3000:]
        redis_server.start()  # same port, empty: whatever was queued before the outage is gone
        recovery = wait_for(lambda: worker.poll() is None and all_current(), timeout=RECOVERY_LIMIT)
        assert worker.poll() is None, log.read_text()[-3000:]
    finally:
        if worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=30)
    with capsys.disabled():
        print(
            f"\n[fault redis] import wall time: {wall_up:.2f} s with Redis up (r1, 81 tools), "
            f"{', '.join(f'{w:.2f}' for w in walls_down)} s with Redis down; Redis down {DOWN_SECONDS:.0f} s; "
            f"every vector current {recovery:.1f} s after Redis came back (sweep every {SWEEP_SECONDS:.0f} s)"
        )
    assert "catalog.rag.tasks.sweep_embeddings" in log.read_text()

    # Nothing lost: three revisions, the last one's tools live, each with its one current vector.
    revisions = list(CatalogRevision.objects.filter(system="condor").order_by("number"))
    assert [r.number for r in revisions] == [1, 2, 3]
    assert [r.manifest_sha256 for r in revisions] == [manifest_sha256(p.read_bytes()) for p in paths]
    final = json.loads(paths[-1].read_text())
    live = Tool.objects.filter(system="condor").live()
    assert set(live.values_list("declared_id", flat=True)) == {t["id"] for t in final["tools"]}
    vectors = dict(ToolEmbedding.objects.filter(tool__in=live).values_list("tool__declared_id", "text_sha256"))
    texts = dict(live.values_list("declared_id", "rag_text_sha256"))
    assert vectors == texts
    assert len(changed) == 8 and all(vectors[i] != vectors_before.get(i) for i in changed)  # embedded after
    duplicated = ToolEmbedding.objects.values("tool_id", "model_id").annotate(n=Count("pk")).filter(n__gt=1)
    assert not duplicated.exists()

    imported = AuditEvent.objects.filter(action="catalog.revision.imported", object_type="catalog.revision")
    assert sorted(imported.values_list("object_id", flat=True)) == [str(r) for r in revisions]
    verification = audit_verify()
    assert verification.ok, verification.reason
    assert verification.checked == AuditEvent.objects.count()


# --- sign-in and card bundles while Redis is down ---------------------------------------------------------------

CLINICIAN = "dr.outage"
CARDS_DE = "/api/v1/cards/de.json"
UP_SECONDS = 4.0


@dataclass
class Step:
    name: str
    started: float
    ended: float
    status: int | None  # None: no HTTP answer at all
    ok: bool


@dataclass
class Browser:
    """One person's cookies against the app, one connection per request (what the test needs of a browser);
    every call is a timed step in `steps`."""

    port: int
    steps: list[Step]
    cookies: dict[str, str] = field(default_factory=dict)
    last: dict[str, str] = field(default_factory=dict)

    def step(self, name: str, ok: Callable[[int, bytes], bool], method: str, path: str, **kwargs: Any) -> bytes:
        started = time.monotonic()
        try:
            status, body = self.call(method, path, **kwargs)
        except OSError as exc:
            self.steps.append(Step(f"{name}: no answer ({exc!r})", started, time.monotonic(), None, False))
            raise
        self.steps.append(Step(name, started, time.monotonic(), status, ok(status, body)))
        return body

    def call(self, method: str, path: str, form: dict[str, str] | None = None, **headers: str) -> tuple[int, bytes]:
        """(status, body); the answer's headers are kept in `last`, its cookies in `cookies`."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = "&".join(f"{k}={v}" for k, v in form.items())
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body, headers)
            response = conn.getresponse()
            data = response.read()
            self.last = dict(response.getheaders())
            for header, value in response.getheaders():
                if header.lower() == "set-cookie":
                    name, _, rest = value.partition("=")
                    self.cookies[name] = rest.split(";", 1)[0]
            return response.status, data
        finally:
            conn.close()


def sign_in_cycle(person: Browser, n: int) -> None:
    """A wrong password for a name nobody has, then the clinician's right one, a page, sign-out."""
    person.cookies.clear()
    form_field = rb'name="csrfmiddlewaretoken" value="([^"]+)"'
    page = person.step(
        "login page", lambda status, body: status == 200 and bool(re.search(form_field, body)), "GET", "/login/"
    )
    token = re.search(form_field, page)
    if token is None:  # a wrong answer, recorded as such
        return
    form = {"csrfmiddlewaretoken": token.group(1).decode(), "username": f"guesser-{n}", "password": "nope"}
    refused = b"Please enter a correct username and password"
    person.step("wrong password", lambda status, body: status == 200 and refused in body, "POST", "/login/", form=form)
    form.update(username=CLINICIAN, password=f"pw-{CLINICIAN}")
    person.step(
        "sign in", lambda status, _: status == 302 and "sessionid" in person.cookies, "POST", "/login/", form=form
    )
    person.step("page", lambda status, body: status == 200 and CLINICIAN.encode() in body, "GET", "/approvals/")
    form = {"csrfmiddlewaretoken": person.cookies.get("csrftoken", "")}
    person.step("sign out", lambda status, _: status == 302, "POST", "/logout/", form=form)
    person.step("signed out", lambda status, _: status == 302, "GET", "/approvals/")


def post_manifest(port: int, token: str, raw: bytes) -> tuple[int, dict[str, Any]]:
    """CI's import: POST /api/v1/catalog/revisions with the manifest as the body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        conn.request("POST", "/api/v1/catalog/revisions", raw, headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def bundle_fetch(frontend: Browser, token: str, expected: tuple[bytes, str]) -> None:
    auth = {"Authorization": f"Bearer {token}"}
    frontend.step("bundle", lambda status, body: status == 200 and body == expected[0], "GET", CARDS_DE, **auth)
    not_modified = {**auth, "If-None-Match": expected[1]}
    frontend.step("bundle 304", lambda status, body: status == 304 and not body, "GET", CARDS_DE, **not_modified)


def drive(clients: list[Callable[[int], None]], stop: threading.Event) -> None:
    """Each client in a loop on a thread of its own until `stop`."""

    def loop(client: Callable[[int], None]) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                client(n)
            except OSError:  # recorded as a step without an answer; a client backs off a little
                time.sleep(0.1)

    threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in clients]
    for t in threads:
        t.start()
    stop.wait()
    for t in threads:
        t.join(timeout=30)


def start_web(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    """gunicorn as the Procfile starts it (gthread workers), on loopback; returns once it answers."""
    gunicorn = str(Path(PY).parent / "gunicorn")
    server = subprocess.Popen(
        [
            *(gunicorn, "condor_admin.wsgi", "--config", "python:condor_admin.gunicorn_conf"),
            *("--bind", f"127.0.0.1:{port}", "--worker-class", "gthread", "--workers", "2", "--threads", "4"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
    )
    wait_for(lambda: server.poll() is not None or _answers(port), timeout=60)
    assert server.poll() is None, log.read_text()[-3000:]
    return server


def _answers(port: int) -> bool:
    try:
        return Browser(port, []).call("GET", "/login/")[0] == 200
    except OSError:
        return False


def test_sign_in_and_card_bundles_answer_rightly_while_redis_is_down(
    transactional_db: Any,
    tmp_path: Path,
    redis_server: RedisServer,
    make_user: Any,
    make_token: Any,
    settings: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]  # what the server checks with
    # Every process of a deployment holds the one audit key: events the server writes are sealed here.
    settings.CONDOR_AUDIT_KEY = audit_key = secrets.token_urlsafe(48)
    env = service_env(
        CONDOR_AUDIT_KEY=audit_key,
        DATABASE_URL=shared_database_url(),
        REDIS_URL=redis_server.url,
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="false",  # plain HTTP on loopback: TLS would end in front of gunicorn
        STATIC_ROOT=str(tmp_path / "static"),
    )
    collect = subprocess.Popen([PY, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=ROOT, env=env)
    make_user(CLINICIAN, "approver", "approver:medication")
    cards_demo_load()
    token = make_token("frontend", scopes=("cards",))
    importer = make_token("ci-import", scopes=("catalog:write",))
    checkpoints = tmp_path / "audit-checkpoints.jsonl"
    settings.CONDOR_AUDIT_CHECKPOINT_FILE = str(checkpoints)  # this process seals (no beat runs here)
    audit_seal()  # the events so far, checkpointed before the outage
    assert collect.wait(timeout=300) == 0
    port = free_port()
    log = tmp_path / "gunicorn.log"
    server = start_web(env, port, log)
    try:
        result: list[Step] = []
        frontend = Browser(port, result)
        status, body = frontend.call("GET", CARDS_DE, Authorization=f"Bearer {token}")
        assert status == 200 and b"Wird geladen" in body  # the demo's German
        expected = (body, frontend.last["ETag"])
        people, frontends = [Browser(port, result) for _ in range(2)], [Browser(port, result) for _ in range(2)]
        clients: list[Callable[[int], None]] = [
            *(lambda n, b=b: sign_in_cycle(b, n) for b in people),
            *(lambda n, b=b: bundle_fetch(b, token, expected) for b in frontends),
        ]
        stop = threading.Event()
        driver = threading.Thread(target=drive, args=(clients, stop))
        driver.start()
        time.sleep(UP_SECONDS)
        redis_server.stop()
        down, up = time.monotonic(), 0.0
        # A card-strings write while Redis is away: every worker builds the bundles of the new version from the
        # rows, the cache unreachable (the bytes do not change: only a locale was added).
        locale_add(actor=Actor(label="outage"), code="fr")
        # And a catalog import: it commits; its embedding could not be queued (the sweep does it later).
        imported = post_manifest(port, importer, DEMO.read_bytes())
        time.sleep(max(0.0, DOWN_SECONDS - (time.monotonic() - down)))
        redis_server.start()
        up = time.monotonic()
        time.sleep(UP_SECONDS)
        stop.set()
        driver.join(timeout=60)
        sign_in_cycle(people[0], 0)  # once more each, with Redis back for certain
        bundle_fetch(frontends[0], token, expected)
        alive = server.poll() is None
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert alive, log.read_text()[-3000:]
    server_log = log.read_text()
    assert imported[0] == 201, imported
    revision = CatalogRevision.objects.get(system="condor", number=imported[1]["revision"]["number"])
    assert revision.manifest_sha256 == manifest_sha256(DEMO.read_bytes())
    assert Tool.objects.filter(system="condor").live().count() == len(json.loads(DEMO.read_text())["tools"])
    assert AuditEvent.objects.filter(action="catalog.revision.imported", object_id=str(revision)).exists()
    verified = audit_verify()  # seals what the outage left pending: a checkpoint after it
    assert verified.ok and verified.checked == AuditEvent.objects.count(), verified.reason
    against = audit_verify_checkpoints(checkpoints.read_text().splitlines())
    assert against.ok, against.reason
    assert len(checkpoints.read_text().splitlines()) >= 2  # before and after the outage

    def phase(step: Step) -> str:
        return "before" if step.ended < down else "after" if step.started > up else "outage"

    table: dict[tuple[str, str], Counter[str]] = {}
    slowest: Counter[tuple[str, str]] = Counter()
    for step in result:
        table.setdefault((phase(step), step.name), Counter())["ok" if step.ok else "wrong"] += 1
        slowest[phase(step), step.name] = max(slowest[phase(step), step.name], step.ended - step.started)
    with capsys.disabled():
        print(f"\n[fault redis, web] Redis down {up - down:.1f} s; 2 sign-in and 2 bundle clients on gunicorn")
        for (when, name), counts in sorted(table.items()):
            print(
                f"  {when:<7} {name:<15} ok {counts['ok']:>4}  wrong {counts['wrong']:>3}  "
                f"slowest {slowest[when, name]:.2f} s"
            )
    wrong = [s for s in result if not s.ok]
    assert not [s for s in result if s.status is None or s.status >= 500], wrong[:5]  # not one 500
    assert not wrong, wrong[:5]  # and every answer the right one
    for name in ("sign in", "page", "sign out", "bundle", "bundle 304"):
        assert table.get(("outage", name), Counter())["ok"] >= 3, (name, table)
        assert table.get(("after", name), Counter())["ok"] >= 1, (name, table)
    assert "Traceback" not in server_log, server_log[-3000:]
    # The outage was met where it matters, and said so in the log.
    for warning in ("sign-in throttle: the cache is unavailable", "session cache unavailable", "card bundle cache"):
        assert warning in server_log, warning
