"""Reaching a live MCP server with the official SDK (mcp 2.x): `initialize`, then `tools/list` through every page.

The console is synchronous (Django views, commands, Celery tasks), so `fetch_listing` runs its own event loop in
the calling thread (`anyio.run`) under one overall deadline. The SDK's stdio transport starts the server in its
own process group and always stops it (stdin closed, then SIGTERM, then SIGKILL to the whole group), also when
the deadline strikes. The server's stderr goes through a pipe of which only the tail is kept, for the error
message: a chatty or hostile server can fill neither the console nor the disk.

Every failure is an `McpFetchError` whose message is one sentence naming the server, the step and what happened.
"""

from __future__ import annotations

import os
import shlex
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from catalog.mcp.domain.fetch import Listing, McpFetchError

if TYPE_CHECKING:
    import httpx2
    import mcp_types as types
    from mcp.client.session import ClientSession, IncomingMessage
    from mcp.shared.exceptions import MCPError

# The SDK (anyio, httpx2, mcp: half a second of imports) is imported inside the functions that reach a server:
# this module is imported by the MCP services and tasks, and so by every process and `manage.py` command
# (`whoowns` included), which reach no server.

__all__ = ["Listing", "McpFetchError", "fetch_listing", "tool_json"]

# A listing larger than this is not a tool catalog; a server still paging after this many pages is looping.
MAX_TOOLS = 100_000
MAX_PAGES = 1_000
STDERR_KEPT_BYTES = 4_096
STDERR_SHOWN_CHARS = 400
STDERR_WAIT_SECONDS = 0.5


@dataclass
class _Probe:
    """What the explanation of a failure needs: which server, which step it was at, what came back."""

    where: str
    timeout: float
    phase: str = "start"
    http_status: int | None = None
    content_type: str = ""
    bad_output: list[Exception] = field(default_factory=list)

    async def on_message(self, message: IncomingMessage) -> None:
        # Transport faults (a stdout line that is not JSON-RPC) reach the session's handler, not the caller.
        if isinstance(message, Exception) and len(self.bad_output) < 3:
            self.bad_output.append(message)

    async def on_response(self, response: httpx2.Response) -> None:
        if response.request.method == "POST" and response.status_code >= 300:
            self.http_status = response.status_code
        if response.request.method == "POST":
            self.content_type = response.headers.get("content-type", "")


class _StderrTail:
    """The server's stderr through a pipe drained by a thread that keeps only the last STDERR_KEPT_BYTES."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self._read_fd = read_fd
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="mcp-server-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._read_fd, 65_536):
                with self._lock:
                    self._tail += chunk
                    del self._tail[:-STDERR_KEPT_BYTES]
        finally:
            os.close(self._read_fd)

    def close_writer(self) -> None:
        """Drop our copy of the write end once the child holds its own: the pipe ends when the server does."""
        self.writer.close()

    def text(self) -> str:
        self.close_writer()
        self._thread.join(STDERR_WAIT_SECONDS)
        with self._lock:
            data = bytes(self._tail)
        lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
        return " / ".join(lines)[-STDERR_SHOWN_CHARS:]


def fetch_listing(
    *,
    command: list[str] | None = None,
    url: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float,
    env: dict[str, str] | None = None,
) -> Listing:
    """Start the server (`command`, over stdio) or reach it (`url`, Streamable HTTP, with `headers`), and list its
    tools, all within `timeout` seconds. `env` is added to the SDK's minimal inherited environment (PATH, HOME…):
    the console's own secrets never reach a server."""
    import anyio

    if (command is None) == (url is None):
        raise ValueError("fetch_listing needs a command or a url, not both")
    if command is not None:
        if not command or not command[0]:
            raise McpFetchError("no command given to start the MCP server")
        probe = _Probe(where=f"MCP server `{shlex.join(command)}`", timeout=timeout)
        stderr = _StderrTail()
        try:
            return anyio.run(_fetch_stdio, command, env, probe, stderr)
        except Exception as exc:
            raise McpFetchError(_explain(exc, probe, stderr.text())) from None
        finally:
            stderr.close_writer()
    assert url is not None
    probe = _Probe(where=f"MCP server at {url}", timeout=timeout)
    try:
        return anyio.run(_fetch_http, url, headers or {}, probe)
    except Exception as exc:
        raise McpFetchError(_explain(exc, probe, "")) from None


async def _fetch_stdio(command: list[str], env: dict[str, str] | None, probe: _Probe, stderr: _StderrTail) -> Listing:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with anyio.fail_after(probe.timeout):
        async with stdio_client(params, errlog=stderr.writer) as (read_stream, write_stream):
            stderr.close_writer()
            return await _list(ClientSession(read_stream, write_stream, message_handler=probe.on_message), probe)


async def _fetch_http(url: str, headers: dict[str, str], probe: _Probe) -> Listing:
    import anyio
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with anyio.fail_after(probe.timeout):
        async with httpx2.AsyncClient(
            headers=headers, timeout=httpx2.Timeout(probe.timeout), event_hooks={"response": [probe.on_response]}
        ) as http:
            probe.phase = "connect"
            async with streamable_http_client(url, http_client=http) as (read_stream, write_stream):
                return await _list(ClientSession(read_stream, write_stream, message_handler=probe.on_message), probe)


async def _list(session: ClientSession, probe: _Probe) -> Listing:
    """The handshake, then every page of tools/list (a server without the tools capability has none)."""
    import mcp_types as types

    async with session:
        probe.phase = "initialize"
        result = await session.initialize()
        identity = {
            "name": result.server_info.name,
            "version": result.server_info.version,
            "protocolVersion": result.protocol_version,
            "title": result.server_info.title,
            "instructions": result.instructions,
        }
        tools: list[dict[str, Any]] = []
        if result.capabilities.tools is None:
            return Listing(identity=identity, tools=tools)
        cursor: str | None = None
        for page in range(1, MAX_PAGES + 1):
            probe.phase = f"tools/list (page {page})" if page > 1 else "tools/list"
            params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            listed = await session.list_tools(params=params)
            tools.extend(tool_json(tool) for tool in listed.tools)
            if len(tools) > MAX_TOOLS:
                raise McpFetchError(f"{probe.where}: listed more than {MAX_TOOLS:,} tools; not a tool catalog")
            cursor = listed.next_cursor
            if cursor is None:
                return Listing(identity=identity, tools=tools)
        raise McpFetchError(f"{probe.where}: tools/list still had a nextCursor after {MAX_PAGES:,} pages")


def tool_json(tool: types.Tool) -> dict[str, Any]:
    """One Tool as MCP's JSON: the fields the server sent, under their MCP names, a null field left out (so an
    absent hint stays absent and MCP's default applies). Inside the schemas a null is data and is kept."""
    data = tool.model_dump(by_alias=True, mode="json", exclude_unset=True)
    if isinstance(data.get("annotations"), dict):
        data["annotations"] = {k: v for k, v in data["annotations"].items() if v is not None}
    return {k: v for k, v in data.items() if v is not None}


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside anyio's task-group wrappers, our own first (they are already explained)."""
    if isinstance(exc, BaseExceptionGroup):
        found = [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
        return sorted(found, key=lambda e: not isinstance(e, McpFetchError))
    return [exc]


def _explain(exc: Exception, probe: _Probe, stderr: str) -> str:
    import httpx2
    from mcp.shared.exceptions import MCPError

    leaf = _leaves(exc)[0]
    where, step = probe.where, probe.phase
    said = f"; its stderr ends: {stderr}" if stderr else ""
    if isinstance(leaf, McpFetchError):
        return leaf.message
    if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
        return f"{where}: no answer to {step} within {probe.timeout:g} s{said}"
    if isinstance(leaf, FileNotFoundError) and step == "start":
        return f"{where}: command not found ({leaf.filename or 'no such file'}); is it installed and on PATH?"
    if isinstance(leaf, OSError) and step == "start":
        return f"{where}: cannot start the server: {leaf.strerror or leaf}"
    if isinstance(leaf, httpx2.ConnectError):
        return f"{where}: cannot connect ({leaf}); is the server running and the URL right?"
    if isinstance(leaf, httpx2.HTTPError):
        return f"{where}: HTTP failure during {step}: {leaf}"
    if isinstance(leaf, MCPError):
        return _explain_mcp_error(leaf, probe, said)
    if isinstance(leaf, ValidationError):
        return f"{where}: its answer to {step} is not valid MCP: {validation_problem(leaf)}"
    return f"{where}: {step} failed: {type(leaf).__name__}: {leaf}"


def _explain_mcp_error(err: MCPError, probe: _Probe, said: str) -> str:
    import mcp_types as types

    where, step, status = probe.where, probe.phase, probe.http_status
    if status in (401, 403):
        return (
            f"{where}: HTTP {status} to {step}: the server wants credentials; send them with "
            "--header 'Authorization: Bearer …' (re-imports read them from CONDOR_MCP_HEADERS)"
        )
    if status == 404:
        return f"{where}: HTTP 404 to {step}: no MCP endpoint at this URL (Streamable HTTP servers usually serve /mcp)"
    if status is not None:
        return f"{where}: HTTP {status} to {step} ({err.message})"
    if err.code == types.CONNECTION_CLOSED:
        if probe.bad_output:
            return f"{where}: does not speak MCP: {_bad_output(probe.bad_output[0])}, then it ended{said}"
        return f"{where}: the server process exited (or closed its output) before answering {step}{said}"
    if err.message.startswith("Unexpected content type"):
        kind = probe.content_type or "none"
        return f"{where}: answered {step} with content type {kind}, not MCP (is this an MCP endpoint?)"
    if step == "initialize":
        return f"{where}: does not speak MCP: it answered initialize with error {err.code} ({err.message}){said}"
    return f"{where}: answered {step} with error {err.code}: {err.message}"


def _bad_output(exc: Exception) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        return f"its output {str(exc.errors()[0].get('input'))[:80]!r} is not a JSON-RPC message"
    return f"its output is not JSON-RPC ({str(exc)[:120]})"


def validation_problem(exc: ValidationError) -> str:
    """The first problem, located: `tools[3] ('send_referral').inputSchema: Field required`."""
    errors = exc.errors()
    if not errors:
        return str(exc)[:200]
    first = errors[0]
    loc = first.get("loc", ())
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    tool = first.get("input") if len(loc) == 3 and loc[0] == "tools" else None
    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
        path = f"tools[{loc[1]}] ({tool['name'][:80]!r}).{loc[2]}"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{path or 'result'}: {first.get('msg', 'invalid')}{more}"
