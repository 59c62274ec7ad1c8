"""`manage.py signoff` and who an import names: the same rules as the revision page, for scripted reviews."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from catalog.core import roles
from catalog.models import CatalogRevision, Tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def officers(make_user: Any) -> tuple[Any, Any, Any]:
    return (
        make_user("ines", roles.CATALOG_ADMIN, roles.SAFETY_OFFICER),
        make_user("olga", roles.SAFETY_OFFICER),
        make_user("omar", roles.SAFETY_OFFICER),
    )


def _write(tmp_path: Path, manifests: Any, tier: str) -> Path:
    tools = [
        manifests.mutate_tool("prescribeMedication", hitlTier=tier),
        manifests.condor_tool("listActiveMedications"),
    ]
    path = tmp_path / f"condor-{tier}.json"
    path.write_text(json.dumps(manifests.condor(tools)))
    return path


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_signoff_applies_the_page_rules_and_exits_1_with_the_reason(
    tmp_path: Path, manifests: Any, officers: Any
) -> None:
    _run("import_catalog", str(_write(tmp_path, manifests, "high")), "--as", "ines")
    with pytest.raises(CommandError, match="you imported condor r1") as refused:
        _run("signoff", "condor", "r1", "--as", "ines", "--comment", "mine")
    assert refused.value.returncode == 1
    with pytest.raises(CommandError, match="comment: say what you checked"):
        _run("signoff", "condor", "1", "--as", "olga")
    assert "(1 of 2); it waits for another safety officer" in _run(
        "signoff", "condor", "1", "--as", "olga", "--comment", "checked tiers"
    )
    with pytest.raises(CommandError, match="you already approved condor r1"):
        _run("signoff", "condor", "1", "--as", "olga", "--comment", "again")
    done = _run("signoff", "condor", "r1", "--as", "omar", "--comment", "checked tiers too")
    assert "(2 of 2); 2 tool(s) now in effect" in done
    assert CatalogRevision.objects.get(system="condor", number=1).review_state == "approved"
    assert Tool.objects.get(declared_id="prescribeMedication").in_effect["hitl_tier"] == "high"


def test_request_changes_keeps_what_is_in_effect(tmp_path: Path, manifests: Any, officers: Any) -> None:
    _run("import_catalog", str(_write(tmp_path, manifests, "high")), "--as", "ines")
    _run("signoff", "condor", "1", "--as", "olga", "--comment", "ok")
    _run("signoff", "condor", "1", "--as", "omar", "--comment", "ok")
    _run("import_catalog", str(_write(tmp_path, manifests, "low")), "--as", "ines")
    out = _run("signoff", "condor", "2", "--as", "olga", "--comment", "why lower it?", "--request-changes")
    assert "changes requested by olga; what is in effect stays as it was" in out
    tool = Tool.objects.get(declared_id="prescribeMedication")
    assert tool.hitl_tier == "low" and tool.in_effect["hitl_tier"] == "high" and tool.awaiting_signoff


def test_bad_arguments_say_what_is_wrong(tmp_path: Path, manifests: Any, officers: Any) -> None:
    _run("import_catalog", str(_write(tmp_path, manifests, "high")), "--as", "ines")
    for args, message in [
        (("condor", "rX", "--as", "olga"), "is not a revision number"),
        (("condor", "9", "--as", "olga"), "condor r9: no such revision"),
        (("condor", "1", "--as", "nobody"), "--as nobody: no such user"),
    ]:
        with pytest.raises(CommandError, match=message):
            _run("signoff", *args, "--comment", "x")


def test_the_cli_import_names_its_importer_once_a_clinical_profile_exists(
    tmp_path: Path, manifests: Any, officers: Any
) -> None:
    _run("import_catalog", str(_write(tmp_path, manifests, "high")), "--as", "ines")
    with pytest.raises(CommandError, match="--as USERNAME is required"):
        _run("import_catalog", str(_write(tmp_path, manifests, "low")))
    assert CatalogRevision.objects.count() == 1


def test_an_api_import_records_the_tokens_owner(manifests: Any, officers: Any, make_token: Any) -> None:
    owned = make_token("ci-owned", scopes=("catalog:write",), owner=officers[0])
    ownerless = make_token("ci-ownerless", scopes=("catalog:write",), owner=None)
    client = Client()
    raw = manifests.encode(manifests.condor())

    def post(token: str, body: bytes) -> Any:
        return client.post(
            "/api/v1/catalog/revisions", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
        )

    first = post(owned, raw)
    assert first.status_code == 201, first.content
    assert CatalogRevision.objects.get(number=1).imported_by == officers[0]
    lowered = manifests.encode(manifests.condor([manifests.mutate_tool("prescribeMedication", hitlTier="low")]))
    refused = post(ownerless, lowered)
    assert refused.status_code == 403 and "has no owner" in refused.json()["detail"]
    assert CatalogRevision.objects.count() == 1
