"""The terminal surface: import_catalog and create_api_token, run as an operator would."""

from __future__ import annotations

import io
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from catalog.core.tokens import DEFAULT_EXPIRY_DAYS
from catalog.models import ApiToken, AuditEvent, CatalogRevision, Tool
from tests.conftest import ROOT
from tests.shared_data import SqliteFiles

pytestmark = pytest.mark.django_db


def test_import_catalog_prints_the_revision_summary(tmp_path: Path, manifests: Any, make_user: Any) -> None:
    path = tmp_path / "condor.json"
    path.write_bytes(manifests.encode(manifests.condor()))
    out = io.StringIO()
    call_command("import_catalog", str(path), stdout=out)
    assert out.getvalue().startswith("condor r1: 2 live tools; 2 added, 0 removed, 0 changed")
    out = io.StringIO()
    make_user("ines", "catalog-admin")
    call_command("import_catalog", str(path), "--as", "ines", stdout=out)  # a clinical profile exists now
    assert out.getvalue().strip() == "condor: unchanged (matches condor r1); nothing written"


def test_import_catalog_lists_every_problem_and_writes_nothing(tmp_path: Path, manifests: Any) -> None:
    m = manifests.condor(
        [manifests.mutate_tool("prescribeMedication", hitlTier=None), manifests.condor_tool("prescribe_medication")],
        forcedFloors=[],
    )
    path = tmp_path / "bad.json"
    path.write_bytes(manifests.encode(m))
    with pytest.raises(CommandError) as info:
        call_command("import_catalog", str(path))
    message = str(info.value)
    assert "manifest refused, 2 problem(s); nothing was changed" in message
    assert "tools[0].hitlTier: required when policyClass is mutate (tool prescribeMedication)" in message
    assert "tools[1].id: canonical key 'prescribe.medication' collides with tools[0].id" in message
    assert Tool.objects.count() == 0 and CatalogRevision.objects.count() == 0


def test_import_catalog_exits_non_zero_from_a_shell(tmp_path: Path, sqlite_files: SqliteFiles) -> None:
    """What a source repository's CI sees: a non-zero exit and the problems on stderr."""
    path = tmp_path / "bad.json"
    path.write_text('{"format": "condor-catalog/v1", "tools": [{"id": "x"}]}')
    env = {"DATABASE_URL": f"sqlite:///{sqlite_files.migrated(tmp_path / 'cli.sqlite3')}", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "manage.py", "import_catalog", str(path)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "tools[0].plane: required key is missing (tool x)" in proc.stderr


def test_import_catalog_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="No such file or directory"):
        call_command("import_catalog", str(tmp_path / "missing.json"))


def test_create_api_token_prints_it_once_and_stores_only_its_hash() -> None:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_api_token", "runtime", "--scopes", "catalog:read,approvals", stdout=out, stderr=err)
    raw = out.getvalue().strip()
    token = ApiToken.objects.get(name="runtime")
    assert raw.startswith("cnd_") and len(raw) > 40
    assert token.token_hash == ApiToken.hash(raw) and raw not in token.token_hash
    assert token.scopes == ["catalog:read", "approvals"] and token.prefix == raw[:10]
    assert "shown once" in err.getvalue()


def test_a_cli_token_expires_like_a_console_token_and_its_creation_is_audited() -> None:
    call_command("create_api_token", "ci", "--scopes", "rag", stdout=io.StringIO(), stderr=io.StringIO())
    token = ApiToken.objects.get(name="ci")
    assert token.expires_at is not None
    assert timezone.localdate(token.expires_at) == timezone.localdate() + timedelta(days=DEFAULT_EXPIRY_DAYS)
    event = AuditEvent.objects.get(action="catalog.api_token.created")
    assert event.actor == "cli" and event.object_id == "ci"
    assert event.after["scopes"] == ["rag"] and event.after["prefix"] == token.prefix


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--scopes", "catalog,admin"],
            "--scopes: unknown scope admin, catalog; choose from catalog:read, catalog:write, approvals, rag, cards, "
            "telemetry "
            "(catalog is now catalog:read to read and export, catalog:write to import)",
        ),
        (["--scopes", ""], "--scopes: choose at least one scope"),
        (["--scopes", "rag", "--expires-days", "0"], "--expires-days: between 1 and 365"),
        (["--scopes", "rag", "--expires-days", "366"], "--expires-days: between 1 and 365"),
    ],
)
def test_create_api_token_refuses_bad_input(args: list[str], message: str) -> None:
    with pytest.raises(CommandError) as info:
        call_command("create_api_token", "runtime", *args)
    assert message in str(info.value)
    assert ApiToken.objects.count() == 0


def test_create_api_token_refuses_a_taken_name() -> None:
    call_command("create_api_token", "runtime", "--scopes", "rag", stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_api_token", "runtime", "--scopes", "rag")


@pytest.mark.django_db(transaction=True)  # a real commit: with no broker the embedding runs after it, in here
def test_import_catalog_shows_its_progress_step_by_step(tmp_path: Path, manifests: Any) -> None:
    path = tmp_path / "condor.json"
    path.write_bytes(manifests.encode(manifests.condor()))
    out, err = io.StringIO(), io.StringIO()
    call_command("import_catalog", str(path), stdout=out, stderr=err)
    lines = err.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines if line.startswith("condor import:")] == [
        "condor import: read and checked 2 tool(s)",
        "condor import: compared: 2 to add, 0 changed, 0 to retire",
        "condor import: wrote revision 1 and its 2 change(s)",
        "condor import: stored the findings",
    ]
    assert "embedding batch 1 of 1 (2 tool(s))" in lines
