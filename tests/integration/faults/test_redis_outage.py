"""Redis stopped for half a minute while manifests are imported.

A real Celery worker with its beat runs against a Redis of our own; we stop that Redis (losing every queued
message: no persistence), import two changed manifests with `manage.py import_catalog` while it is down, and
start it again on the same port. The imports must commit at their usual speed (the after-commit enqueue gives
up within about a second and logs it), the worker must survive the outage, and the beat's sweep must bring
every changed tool a current vector, with no vector row duplicated. Nothing may be lost: every revision, every
audit event, every vector; the audit chain verifies.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Count

from catalog.core.audit import audit_verify
from catalog.domain.manifest import manifest_sha256
from catalog.models import AuditEvent, CatalogRevision, Tool, ToolEmbedding
from catalog.rag.selectors.vectors import embedding_status

from .conftest import PY, ROOT, RedisServer, requires_services, service_env, shared_database_url, wait_for

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
    status = embedding_status(system="condor")
    return status.stale == status.missing == 0


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
