"""An OTLP/JSON export nested deeper than any export nests is a 400 with the OTLP error body, never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.models import ToolUsage
from catalog.usage.otlp import JSON_DEPTH_MAX

URL = "/api/v1/otlp/v1/traces"


@pytest.fixture
def token(make_token: Any) -> str:
    return make_token("runtime-telemetry", scopes=("telemetry",))


def post_json(client: Client, token: str, body: bytes) -> Any:
    return client.post(URL, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"})


def nested(levels: int) -> bytes:
    """An export whose unknown field `x` holds arrays nested so that the whole body is `levels` deep."""
    inner = "[" * (levels - 1) + "]" * (levels - 1)
    return b'{"resourceSpans": [], "x": ' + inner.encode() + b"}"


@pytest.mark.parametrize("levels", [50_000, JSON_DEPTH_MAX + 1], ids=["past-the-decoder", "one-past-the-bound"])
def test_a_json_export_nested_too_deeply_is_a_400_status_that_says_so(client: Client, token: str, levels: int):
    response = post_json(client, token, nested(levels))
    assert response.status_code == 400, response.content[:500]
    body = response.json()
    assert body["code"] == 3  # google.rpc.Code INVALID_ARGUMENT, as for every malformed body
    assert body["message"] == body["detail"]
    assert body["detail"].startswith(f"the JSON is nested too deeply: more than {JSON_DEPTH_MAX} levels")
    assert body["detail"].endswith("nothing was stored")
    assert ToolUsage.objects.count() == 0


def test_an_export_exactly_at_the_depth_bound_is_read(client: Client, token: str):
    response = post_json(client, token, nested(JSON_DEPTH_MAX))
    assert response.status_code == 200, response.content[:500]
