"""What a person running an import in a shell sees: each progress line once on stderr, the result alone on stdout.

Run as a process, not with call_command: the duplicates came from the root logger's console handler (the process's
real stderr) repeating what the command's own progress handler had written, which in-process streams cannot show.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, condor_manifest, encode
from tests.shared_data import SqliteFiles

TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
STEPS = ("read and checked", "compared:", "wrote revision", "stored the findings")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, sqlite_files: SqliteFiles) -> dict[str, str]:
    """A migrated scratch database, once for the module (no broker: tasks and embedding run in the command)."""
    database = sqlite_files.migrated(tmp_path_factory.mktemp("cli") / "cli.sqlite3")
    env = {"DATABASE_URL": f"sqlite:///{database}", "PATH": "/usr/bin:/bin"}
    # The importer `--as` names once a clinical profile exists (the condor manifest brings one).
    create = "from django.contrib.auth.models import User; User.objects.create(username='ines')"
    subprocess.run([sys.executable, "manage.py", "shell", "-c", create], cwd=ROOT, env=env, check=True)
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def assert_progress_once_then_the_rest(stderr: str, system: str) -> None:
    lines = stderr.splitlines()
    progress = [i for i, line in enumerate(lines) if line.startswith(f"{system} import: ") or "embedding batch" in line]
    for step in STEPS:
        assert sum(line.startswith(f"{system} import: {step}") for line in lines) == 1, stderr
    assert sum("embedding batch 1 of 1" in line for line in lines) == 1, stderr
    # An in-process task's bookkeeping is a worker's log, not the command's output.
    assert not [line for line in lines if line.startswith("Task ") or "No hostname was supplied" in line], stderr
    # The process's other lines (the audit log's checkpoints) follow the progress instead of cutting through it.
    others = [i for i in range(len(lines)) if i not in progress]
    assert not others or max(progress) < min(others), stderr


def test_import_catalog_prints_each_progress_line_once_and_only_the_result_on_stdout(
    env: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "condor.json"
    path.write_bytes(encode(condor_manifest()))
    done = manage(env, "import_catalog", str(path), "--as", "ines")
    assert done.stdout == (
        "condor r1: 2 live tools; 2 added, 0 removed, 0 changed (2 with safety-relevant changes); config changed: "
        "baselineCount, forcedFloors, ownership, profiles, teams\n"
    )
    assert_progress_once_then_the_rest(done.stderr, "condor")
    assert "audit checkpoint seq=" in done.stderr  # held, not dropped: it must reach stderr whatever the level


def test_import_mcp_prints_each_progress_line_once_and_only_the_result_on_stdout(env: dict[str, str]) -> None:
    if not TIME_SERVER.exists():
        pytest.skip(f"mcp-server-time is not installed ({TIME_SERVER}): run `make install`")
    done = manage(env, "import_mcp", "--server", "time", "--as", "ines", "--", str(TIME_SERVER))
    assert done.stdout.startswith("mcp:time r1: 2 live tools; 2 added") and done.stdout.count("\n") == 1
    assert_progress_once_then_the_rest(done.stderr, "mcp:time")
