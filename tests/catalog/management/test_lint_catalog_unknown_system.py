"""lint_catalog --system naming no imported catalog: a check that matched nothing must not pass."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import ManagementUtility, call_command
from django.core.management.base import CommandError

from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db


def test_a_system_with_no_imported_catalog_is_refused_naming_it_and_the_imported_ones(manifests: Any) -> None:
    catalog_import(raw=manifests.encode(manifests.condor()), via="test")
    with pytest.raises(CommandError) as refused:
        call_command("lint_catalog", "--system", "mcp:nosuch", "--fail-on", "error")
    assert refused.value.returncode == 1
    assert str(refused.value).startswith("--system mcp:nosuch: no catalog of that system has been imported")
    assert "(imported: condor)" in str(refused.value)


def test_a_system_never_imported_is_refused_even_when_its_pages_exist() -> None:
    """condor and tucan have console pages before their first import; linting nothing there still proves nothing."""
    with pytest.raises(CommandError, match=r"--system tucan: .*\(imported: none yet\)"):
        call_command("lint_catalog", "--system", "tucan")


def test_from_a_shell_an_unknown_system_exits_1_with_the_sentence_on_stderr(
    manifests: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a source repository's CI sees: manage.py's own argv path (CommandError → exit status), not 0 findings."""
    catalog_import(raw=manifests.encode(manifests.condor()), via="test")
    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", "lint_catalog", "--system", "mcp:nosuch", "--fail-on", "error"]).execute()
    assert exited.value.code == 1
    out, err = capsys.readouterr()
    assert "0 finding(s)" not in out
    assert "--system mcp:nosuch: no catalog of that system has been imported (imported: condor)" in err
