"""manage.py lint_catalog, as a source repository's CI runs it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.models import Finding, Tool
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("lint_catalog", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def warning_only(manifests: Any) -> dict[str, Any]:
    return manifests.condor(
        [
            manifests.mutate_tool("prescribeMedication", retryClass="transient"),
            manifests.condor_tool("listActiveMedications"),
        ]
    )


def test_exit_code_follows_the_threshold(manifests: Any, warning_only: dict[str, Any]) -> None:
    catalog_import(raw=manifests.encode(warning_only), via="test")
    code, out, _ = run("--system", "condor")
    assert code == 0
    assert "WARNING  retry-declared-on-mutating" in out and "prescribeMedication" in out
    assert "      1  warning  retry-declared-on-mutating" in out
    code, _, err = run("--system", "condor", "--fail-on", "warning")
    assert code == 1 and "1 finding(s) at or above --fail-on warning" in err


def test_errors_fail_by_default(manifests: Any) -> None:
    tools = [manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none")]
    catalog_import(raw=manifests.encode(manifests.condor(tools, forcedFloors=[])), via="test")
    code, out, _ = run("--system", "condor")
    assert code == 1 and "ERROR    mutate-without-hitl" in out
    assert run("--system", "condor", "--fail-on", "never")[0] == 0


def test_json_format(manifests: Any, warning_only: dict[str, Any]) -> None:
    catalog_import(raw=manifests.encode(warning_only), via="test")
    _, out, _ = run("--system", "condor", "--format", "json")
    (finding,) = json.loads(out)
    assert finding["rule"] == "retry-declared-on-mutating"
    assert finding["details"] == {"declared": "transient", "effective": "none"}


def test_lint_a_manifest_file_without_importing(tmp_path: Path, manifests: Any) -> None:
    tools = [manifests.condor_tool("stopMedication", mutating=True, policyClass=None, retryClass="none")]
    path = tmp_path / "condor.json"
    path.write_bytes(manifests.encode(manifests.condor(tools, forcedFloors=[], baselineCount=1)))
    code, out, _ = run("--manifest", str(path))
    assert code == 1 and "mutate-without-hitl" in out
    assert Tool.objects.count() == 0 and Finding.objects.count() == 0


def test_a_refused_manifest_is_reported_not_linted(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"format": "tucan-tools/v1"}')
    with pytest.raises(CommandError, match="agents: required key is missing"):
        call_command("lint_catalog", "--manifest", str(path))


def test_save_refreshes_the_stored_findings(manifests: Any, warning_only: dict[str, Any]) -> None:
    catalog_import(raw=manifests.encode(warning_only), via="test")
    Finding.objects.all().delete()
    run("--system", "condor", "--save", "--fail-on", "never")
    assert list(Finding.objects.values_list("rule", flat=True)) == ["retry-declared-on-mutating"]
