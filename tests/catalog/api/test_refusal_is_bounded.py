"""A refused manifest's answer has a size bound: the first PROBLEMS_LISTED_MAX problems, then how many more.

1.8 MB of bad tools once answered 38.7 MB of problems, in the API's 422, an import job's `errors` and the command's
output alike. `detail` (and the command's first line) still counts every problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from catalog.domain.manifest import PROBLEMS_LISTED_MAX, ManifestError, load_manifest
from catalog.models import CatalogRevision, ImportJob
from catalog.services.import_jobs import import_job_create, import_job_run

pytestmark = pytest.mark.django_db
URL = "/api/v1/catalog/revisions"
# Each tool is an id alone: six required keys missing, six problems a tool.
TOOLS = 300
PROBLEMS = TOOLS * 6


def many_bad_tools(manifests: Any) -> bytes:
    raw = manifests.encode(manifests.condor([{"id": f"tool{i}"} for i in range(TOOLS)], forcedFloors=[]))
    with pytest.raises(ManifestError) as refused:
        load_manifest(raw)
    assert len(refused.value.problems) == PROBLEMS  # the premise: more problems than an answer lists
    return raw


def assert_bounded(errors: list[str]) -> None:
    assert all(isinstance(line, str) for line in errors)
    assert len(errors) == PROBLEMS_LISTED_MAX + 1
    assert errors[0] == "tools[0].plane: required key is missing (tool tool0)"
    assert errors[-1] == (
        f"… and {PROBLEMS - PROBLEMS_LISTED_MAX:,} more problem(s): fix those listed and import again to see the rest"
    )


def test_the_api_lists_the_first_problems_and_counts_them_all(client: Client, manifests: Any, make_token: Any) -> None:
    response = client.post(
        URL,
        data=many_bad_tools(manifests),
        content_type="application/json",
        headers={"Authorization": f"Bearer {make_token()}"},
    )
    assert response.status_code == 422
    body = response.json()
    assert body["detail"] == (
        f"manifest refused: {PROBLEMS:,} problem(s); the first {PROBLEMS_LISTED_MAX:,} are listed; nothing was changed"
    )
    assert_bounded(body["errors"])
    assert CatalogRevision.objects.count() == 0


def test_an_import_job_stores_the_same_bounded_list(
    manifests: Any, make_user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):  # the worker is called by hand below
        job = import_job_create(raw=many_bad_tools(manifests), via="test", imported_by=make_user("ines"))
    import_job_run(job.pk)
    job = ImportJob.objects.get(pk=job.pk)
    assert job.state == ImportJob.State.FAILED
    assert_bounded(job.errors)


def test_import_catalog_prints_the_first_problems_and_counts_them_all(tmp_path: Path, manifests: Any) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(many_bad_tools(manifests))
    with pytest.raises(CommandError) as refused:
        call_command("import_catalog", str(path))
    first, *listed = str(refused.value).splitlines()
    assert first == f"{path}: manifest refused, {PROBLEMS:,} problem(s); nothing was changed:"
    assert_bounded([line.removeprefix("  ") for line in listed])


def test_a_problem_quoting_a_huge_key_is_cut_keeping_where_and_what_to_do(
    client: Client, manifests: Any, make_token: Any
) -> None:
    key = "k" * 100_000
    tools = [manifests.condor_tool("listAllergies", **{key: 1})]
    response = client.post(
        URL,
        data=json.dumps(manifests.condor(tools, forcedFloors=[])),
        content_type="application/json",
        headers={"Authorization": f"Bearer {make_token()}"},
    )
    assert response.status_code == 422
    (problem,) = response.json()["errors"]
    assert len(problem) < 1_100
    assert problem.startswith("tools[0].kkkk") and "characters cut" in problem
    assert problem.endswith("(tool listAllergies)")
