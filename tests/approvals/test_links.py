"""Approval links (issue 23, item 8): APPROVALS_BASE_URL set is always used; unset, links follow the host the
console was reached on, the API's `request.url` and the worker's notifications alike."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import ApprovalRequest
from approvals.notify import request_link

from .conftest import Runtime, evaluate_body

pytestmark = pytest.mark.django_db


def _evaluate(runtime: Runtime, host: str) -> Any:
    return runtime.client.post(
        "/api/v1/approvals/evaluate",
        data=evaluate_body(),
        content_type="application/json",
        headers={**runtime.headers, "Host": host},
    )


def test_unset_the_link_follows_the_host_the_runtime_called(runtime: Runtime, settings: Any) -> None:
    settings.APPROVALS_BASE_URL = ""
    settings.ALLOWED_HOSTS = ["console.example", "testserver"]
    response = _evaluate(runtime, "console.example:8123")
    req = response.json()["request"]
    assert req["url"] == f"http://console.example:8123/approvals/{req['id']}/"
    stored = ApprovalRequest.objects.get(pk=req["id"])
    # The worker's notification, sent later without a request, points where the runtime reached the console.
    assert request_link(stored) == f"http://console.example:8123/approvals/{req['id']}/"
    polled = runtime.client.get(f"/api/v1/approvals/{req['id']}", headers=runtime.headers).json()
    assert polled["url"] == f"http://testserver/approvals/{req['id']}/"


def test_set_the_base_url_is_always_used(runtime: Runtime, settings: Any) -> None:
    settings.APPROVALS_BASE_URL = "https://condor.example.org"
    settings.ALLOWED_HOSTS = ["console.example", "testserver"]
    req = _evaluate(runtime, "console.example:8123").json()["request"]
    assert req["url"] == f"https://condor.example.org/approvals/{req['id']}/"
    assert request_link(ApprovalRequest.objects.get(pk=req["id"])) == req["url"]


def test_unset_and_no_known_host_the_link_is_a_path(runtime: Runtime, settings: Any) -> None:
    settings.APPROVALS_BASE_URL = ""
    req = runtime.suspend()
    stored = ApprovalRequest.objects.get(pk=req["id"])
    stored.console_origin = ""
    assert request_link(stored) == f"/approvals/{req['id']}/"
