"""Importing live MCP servers through `manage.py import_mcp` and the console's re-import, against real servers:
the reference server `@modelcontextprotocol/server-everything` (npm, `make mcp-servers`) over stdio and over
Streamable HTTP, `mcp-server-time` (PyPI, the test extra) over stdio, and `rugpull_server.py` (a small server on
the official SDK) for pagination, required credentials and a description rewritten after the first listing.

Without the npm server these tests are skipped; CI sets CONDOR_REQUIRE_MCP_SERVERS=1, which fails them instead.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from catalog.core import roles
from catalog.models import AuditEvent, CatalogRevision, Finding, McpServer, Tool, ToolChange
from tests.approvals.conftest import Runtime
from tests.conftest import sign_off, signed_import, tasks_in_process

REPO = Path(__file__).resolve().parents[3]
EVERYTHING = REPO / ".mcp-servers" / "node_modules" / ".bin" / "mcp-server-everything"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
RUGPULL = Path(__file__).resolve().parent / "rugpull_server.py"
SECRET = "Bearer s3cret-for-the-test"


def server_command(path: Path, what: str) -> str:
    if path.exists():
        return str(path)
    message = f"{what} is not installed ({path}): run `make mcp-servers` / `make install`"
    if os.environ.get("CONDOR_REQUIRE_MCP_SERVERS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def import_mcp(*args: str) -> str:
    out = _Out()
    call_command("import_mcp", *args, stdout=out, stderr=_Out(), verbosity=0)
    return out.text


class _Out:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode} before listening on {port}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listened on {port} within {seconds} s")


@pytest.fixture
def http_server() -> Iterator[Any]:
    """Start a server that listens on a free port; stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], port: int, env: dict[str, str] | None = None) -> str:
        process = subprocess.Popen(
            argv, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        started.append(process)
        wait_listening(port, process)
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in started:
        process.terminate()
        process.wait(10)


def written() -> tuple[int, int, int, int]:
    """What an import writes: revisions, changes, tools and audit events."""
    return (
        CatalogRevision.objects.count(),
        ToolChange.objects.count(),
        Tool.objects.count(),
        AuditEvent.objects.count(),
    )


def test_server_everything_over_stdio_is_a_catalog_and_an_unchanged_reimport_writes_nothing(db: Any) -> None:
    command = server_command(EVERYTHING, "@modelcontextprotocol/server-everything")
    summary = import_mcp("--server", "everything", "--", command)
    assert summary.startswith("mcp:everything r1:")
    server = McpServer.objects.get(slug="everything")
    assert (server.name, server.transport, server.command) == ("mcp-servers/everything", "stdio", [command])
    assert server.protocol_version and server.version
    tools = {t.declared_id: t for t in Tool.objects.filter(system="mcp:everything")}
    assert {"echo", "get-sum", "toggle-simulated-logging"} <= set(tools) and len(tools) == len(server.listing)
    # Declared hints mapped onto the axes: echo says read-only, the toggle says it writes.
    assert tools["echo"].mutating is False and tools["echo"].mcp["annotations"]["readOnlyHint"] is True
    assert tools["toggle-simulated-logging"].mutating is True
    # A writing tool without a HITL tier is an error finding, like a Condor or TUCAN tool's.
    assert Finding.objects.filter(tool=tools["toggle-simulated-logging"], rule="mutate-without-hitl").exists()

    before = written()
    again = import_mcp("--server", "everything", "--", command)
    assert "unchanged" in again and written() == before


def test_server_everything_over_streamable_http_lists_the_same_tools(db: Any, http_server: Any) -> None:
    command = server_command(EVERYTHING, "@modelcontextprotocol/server-everything")
    port = free_port()
    url = http_server([command, "streamableHttp"], port, env={"PORT": str(port)})
    import_mcp("--server", "everything-http", "--url", url)
    server = McpServer.objects.get(slug="everything-http")
    assert (server.transport, server.url, server.header_names) == ("http", url, [])
    names = set(Tool.objects.filter(system="mcp:everything-http").values_list("declared_id", flat=True))
    assert {"echo", "get-sum"} <= names and len(names) == len(server.listing)


def test_mcp_server_time_from_pypi_over_stdio(db: Any) -> None:
    command = server_command(TIME_SERVER, "mcp-server-time")
    import_mcp("--server", "time", "--", command, "--local-timezone", "Europe/Berlin")
    tools = {t.declared_id: t for t in Tool.objects.filter(system="mcp:time")}
    assert set(tools) == {"get_current_time", "convert_time"}
    assert not any(t.mutating for t in tools.values())
    assert "timezone" in json.dumps(tools["convert_time"].input_schema)


def test_a_rug_pull_on_reimport_waits_for_sign_off_and_the_gate_keeps_the_pinned_declaration(
    db: Any, tmp_path: Path, client: Client, make_user: Any, make_token: Any, manifests: Any
) -> None:
    # A clinical profile exists (the Condor catalog brings it): imports name their importer, sign-offs count.
    signed_import(manifests.encode(manifests.condor([manifests.condor_tool("listActiveMedications")])))
    make_user("importer", roles.CATALOG_ADMIN)
    state = tmp_path / "listings"
    argv = ["--server", "clinic", "--as", "importer", "--", sys.executable, str(RUGPULL), "--state", str(state)]
    import_mcp(*argv)
    sign_off("mcp:clinic")
    send = Tool.objects.get(system="mcp:clinic", declared_id="send_referral")
    assert not send.awaiting_signoff and "mirror-clinic" not in send.in_effect["rag_description"]

    summary = import_mcp(*argv)  # the server's second listing carries the rug pull
    assert state.read_text() == "2" and "1 changed" in summary
    revision = CatalogRevision.objects.get(system="mcp:clinic", number=2)
    change = ToolChange.objects.get(revision=revision, declared_id="send_referral")
    assert change.classes == {"rag_description": "weakening", "input_schema": "weakening"} and change.weakening
    assert not ToolChange.objects.filter(revision=revision, declared_id="lookup_patient").exists()
    send.refresh_from_db()
    assert send.awaiting_signoff and "mirror-clinic" not in send.in_effect["rag_description"]

    # Clinical profiles are answered by the pinned schema, which has no copyTo; the demo sees the newest listing.
    runtime = Runtime(client, make_token("runtime", scopes=("approvals",)))
    args = {"patientId": "pat-1", "clinic": "Praxis Nord", "letter": "…", "copyTo": "records@mirror-clinic.com"}
    body = {"tool": "mcp__clinic__send_referral", "dispatchMode": "operator", "args": args}
    refused = runtime.evaluate(profile="clinical-production", **body)
    assert refused.status_code == 422 and "copyTo" in refused.content.decode()
    demo = runtime.evaluate(profile="demo", **body)
    # Not refused there: a write with no HITL tier waits for an approver (fail closed), with the new argument.
    assert demo.status_code == 201 and demo.json()["reason"] == "ungated-mutation"
    assert demo.json()["request"]["args"]["copyTo"] == args["copyTo"]

    client.force_login(make_user("officer", roles.SAFETY_OFFICER))
    tool_page = client.get("/tools/mcp:clinic/send_referral/").content.decode()
    assert "changed since pinned" in tool_page
    diff = client.get(f"/revisions/mcp:clinic/{revision.number}/").content.decode()
    assert "mirror-clinic.com" in diff and "copyTo" in diff


def test_every_page_of_tools_list_is_followed(db: Any) -> None:
    import_mcp("--server", "registry", "--", sys.executable, str(RUGPULL), "--tools", "40", "--page-size", "7")
    assert Tool.objects.filter(system="mcp:registry").count() == 40  # six pages of seven, the last of five


def test_credentials_over_http_are_sent_never_stored_and_the_console_reimport_reads_them_from_settings(
    db: Any,
    http_server: Any,
    client: Client,
    make_user: Any,
    settings: Any,
    tmp_path: Path,
    django_capture_on_commit_callbacks: Any,
) -> None:
    port = free_port()
    argv = [sys.executable, str(RUGPULL), "--http", str(port), "--state", str(tmp_path / "listings")]
    url = http_server([*argv, "--require-header", f"Authorization: {SECRET}"], port)

    with pytest.raises(CommandError) as refused:
        import_mcp("--server", "clinic", "--url", url)
    assert "HTTP 401" in str(refused.value) and "--header" in str(refused.value)
    assert not Tool.objects.exists() and not McpServer.objects.exists()

    saved = tmp_path / "clinic.json"
    import_mcp("--server", "clinic", "--url", url, "--header", f"Authorization: {SECRET}", "--save", str(saved))
    assert json.loads(saved.read_text())["format"] == "mcp-tools/v1"
    server = McpServer.objects.get(slug="clinic")
    assert server.header_names == ["Authorization"]
    rows = [*McpServer.objects.values(), *AuditEvent.objects.values("before", "after")]
    stored = json.dumps(rows, default=str)
    assert "s3cret" not in stored

    admin = make_user("admin", roles.CATALOG_ADMIN)
    client.force_login(admin)
    # Without the header in CONDOR_MCP_HEADERS the re-import fails and the server page says why.
    with tasks_in_process(), django_capture_on_commit_callbacks(execute=True):
        client.post("/mcp/clinic/reimport")
    server.refresh_from_db()
    assert "CONDOR_MCP_HEADERS" in server.last_error
    assert "CONDOR_MCP_HEADERS" in client.get("/mcp/clinic/").content.decode()

    settings.CONDOR_MCP_HEADERS = {"clinic": {"Authorization": SECRET}}
    with tasks_in_process(), django_capture_on_commit_callbacks(execute=True):
        client.post("/mcp/clinic/reimport")
    server.refresh_from_db()
    assert server.last_error == ""
    # The re-import listed the server again, which rewrote the referral's description: revision 2, to review.
    assert CatalogRevision.objects.filter(system="mcp:clinic").count() == 2


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/nonexistent/mcp-server"], "command not found"),
        (["echo", "hello"], "does not speak MCP"),
        ([sys.executable, "-c", "import time; time.sleep(30)", "--timeout", "1"], "no answer to initialize within 1 s"),
    ],
    ids=["does-not-start", "not-mcp", "silent"],
)
def test_a_server_that_cannot_be_listed_is_a_clear_error_and_changes_nothing(
    db: Any, argv: list[str], expected: str
) -> None:
    timeout = []
    if "--timeout" in argv:
        timeout, argv = argv[-2:], argv[:-2]
    with pytest.raises(CommandError) as failed:
        import_mcp("--server", "broken", *timeout, "--", *argv)
    assert expected in str(failed.value) and "nothing was changed" in str(failed.value)
    assert written() == (0, 0, 0, 0)


def test_a_registered_server_that_stops_answering_keeps_its_catalog_and_records_why(db: Any) -> None:
    import_mcp("--server", "clinic", "--", sys.executable, str(RUGPULL))
    before = set(Tool.objects.filter(system="mcp:clinic").values_list("declared_id", flat=True))
    with pytest.raises(CommandError):
        import_mcp("--server", "clinic", "--url", f"http://127.0.0.1:{free_port()}/mcp", "--timeout", "5")
    server = McpServer.objects.get(slug="clinic")
    assert "cannot connect" in server.last_error and server.transport == "stdio"
    assert set(Tool.objects.filter(system="mcp:clinic").values_list("declared_id", flat=True)) == before
