"""The terminal surface: import_catalog and create_api_token, run as an operator would."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.models import ApiToken, CatalogRevision, Tool
from tests.conftest import ROOT

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


def test_import_catalog_exits_non_zero_from_a_shell(tmp_path: Path) -> None:
    """What a source repository's CI sees: a non-zero exit and the problems on stderr."""
    path = tmp_path / "bad.json"
    path.write_text('{"format": "condor-catalog/v1", "tools": [{"id": "x"}]}')
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}", "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
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
    call_command("create_api_token", "runtime", "--scopes", "catalog,approvals", stdout=out, stderr=err)
    raw = out.getvalue().strip()
    token = ApiToken.objects.get(name="runtime")
    assert raw.startswith("cnd_") and len(raw) > 40
    assert token.token_hash == ApiToken.hash(raw) and raw not in token.token_hash
    assert token.scopes == ["catalog", "approvals"] and token.prefix == raw[:10]
    assert "shown once" in err.getvalue()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scopes", "catalog,admin"], "unknown scope(s) admin"),
        (["--scopes", ""], "(none given)"),
        (["--scopes", "rag", "--expires-days", "0"], "--expires-days"),
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
