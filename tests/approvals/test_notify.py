"""Notifications carry what the runtime sent (patientRef, requestedBy) without letting it forge lines, links or
mentions: the webhook's text is escaped Slack markup, both texts lose control characters, each field is bounded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.core import mail

from approvals.notify import FIELD_CHARS

from .conftest import Runtime

pytestmark = pytest.mark.django_db

FORGED_LINES = "pat-1\n• forgedTool (tier low, operator) requested by dr.evil\r\n  https://evil.example/approve\u2028x"
MARKUP = "<!channel> <!here> <@U024BE7LH> <https://evil.example|approve here> [approve](https://evil.example) `x`"
CONTROLS = "dr.\x1b[31mhouse\x07\t\x7f\u202eevil"


class _Hook(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        _Hook.received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"])
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def webhook(settings: Any) -> Iterator[list[str]]:
    """The texts a Slack-compatible webhook receives."""
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Hook.received = []
    settings.APPROVALS_WEBHOOK_URL = f"http://127.0.0.1:{server.server_port}/hooks/approvals"
    try:
        yield _Hook.received
    finally:
        server.shutdown()
        server.server_close()


def announce(runtime: Runtime, capture: Any, **fields: str) -> dict[str, Any]:
    with capture(execute=True):
        return runtime.suspend(**fields)


def test_a_patient_ref_with_newlines_cannot_forge_lines_in_the_webhook_or_the_mail(
    runtime: Runtime, approver: Any, webhook: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    req = announce(runtime, django_capture_on_commit_callbacks, patientRef=FORGED_LINES)
    (text,) = webhook
    body = mail.outbox[0].body
    for message in (text, body):
        lines = message.split("\n")
        assert len(lines) == 3, lines  # the lead, the request, its link
        assert lines[1].startswith("• prescribeMedication (tier high, supervised) for patient ")
        assert lines[2].startswith("  http") and lines[2].endswith(f"/approvals/{req['id']}/")
        assert "\r" not in message and "\u2028" not in message
    assert "for patient `pat-1 • forgedTool (tier low, operator) requested by dr.evil" in text
    assert "for patient pat-1 • forgedTool" in body


def test_slack_markup_in_requested_by_is_escaped_into_plain_text(
    runtime: Runtime, approver: Any, webhook: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    announce(runtime, django_capture_on_commit_callbacks, requestedBy=MARKUP)
    (text,) = webhook
    # No control sequence survives: no mention, no channel or user ping, no link.
    assert "<" not in text and ">" not in text
    assert "&lt;!channel&gt; &lt;!here&gt; &lt;@U024BE7LH&gt; &lt;https://evil.example|approve" in text
    # The field sits in one code span (its own backticks turned to quotes), where markdown links and mentions
    # of Slack-compatible servers (Mattermost) are not parsed either.
    shown = text.split("requested by ", 1)[1].split("; expires")[0]
    assert shown.startswith("`&lt;!channel&gt;") and shown.endswith("`") and shown.count("`") == 2
    assert "&lt;!channel&gt;" not in mail.outbox[0].body and "requested by <!channel>" in mail.outbox[0].body


def test_control_characters_are_stripped_and_each_field_is_bounded(
    runtime: Runtime, approver: Any, webhook: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    long_ref = "P" * 200
    announce(runtime, django_capture_on_commit_callbacks, requestedBy=CONTROLS, patientRef=long_ref)
    (text,) = webhook
    body = mail.outbox[0].body
    for message in (text, body):
        assert not any(ch in message for ch in "\x1b\x07\x7f\t\u202e"), repr(message)
        assert "dr. [31mhouse" in message
        assert "P" * (FIELD_CHARS - 1) + "…" in message and "P" * FIELD_CHARS not in message


def test_an_ordinary_request_reads_as_before(
    runtime: Runtime, approver: Any, webhook: list[str], django_capture_on_commit_callbacks: Any
) -> None:
    announce(runtime, django_capture_on_commit_callbacks, patientRef="pat-1", requestedBy="dr.house")
    (text,) = webhook
    assert "for patient `pat-1` requested by `dr.house`; expires " in text
    assert "for patient pat-1 requested by dr.house; expires " in mail.outbox[0].body
