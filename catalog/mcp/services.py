"""Importing an MCP server live: list its tools, build the manifest with the stored overlay, import it as any
manifest is imported, then record how the server was reached (or why it could not be).

The import itself (the revision, the diff, the findings, the server's identity, overlay and listing) is
`catalog.services.imports.catalog_import`, unchanged: a live server is one more way a manifest arrives. What
this module adds is the transport: the command or URL and the header names, so the console can re-import it.
Header values are never stored; a re-import over HTTP reads them from `CONDOR_MCP_HEADERS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.domain.manifest import ManifestError
from catalog.domain.vocabulary import mcp_server_id_problem, mcp_system
from catalog.mcp.client import fetch_listing
from catalog.mcp.domain.fetch import Listing, McpFetchError
from catalog.mcp.domain.listing import manifest_bytes, manifest_from_listing
from catalog.models import McpServer
from catalog.services.imports import ImportResult, catalog_import

OBJECT_TYPE = "catalog.mcp_server"
# The re-import task's registered name (catalog/mcp/tasks.py): services start it by name, never by import.
REIMPORT_SERVER_TASK = "catalog.mcp.tasks.reimport_server"
DEFAULT_TIMEOUT_SECONDS = 30.0
# The fields a live import records about the way it reached the server (the audit event's before and after).
TRANSPORT_FIELDS = ("transport", "command", "url", "header_names", "last_error")
# A refused manifest's first problems are kept on the row; the command line shows them all.
PROBLEMS_KEPT = 5


def mcp_import_live(
    *,
    server_id: str,
    command: list[str] | None = None,
    url: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float,
    via: str,
    imported_by: User | None = None,
    actor: Actor,
    save_to: Path | None = None,
) -> ImportResult:
    """List the server's tools and import them as the catalog `mcp:<server_id>`.

    Raises McpFetchError when the server cannot be listed and ManifestError when the listing is no valid
    manifest; either way nothing of the catalog is written, and a registered server records the failure.
    `save_to` receives the manifest before it is imported (also one the import then refuses, to read)."""
    problem = mcp_server_id_problem(server_id)
    if problem:
        raise McpFetchError(f"server id {server_id!r}: {problem}")
    registered = McpServer.objects.filter(slug=server_id).first()
    try:
        listing = fetch_listing(command=command, url=url, headers=headers, timeout=timeout)
    except McpFetchError as exc:
        mcp_server_failed(server_id=server_id, message=exc.message, actor=actor)
        raise
    governance = registered.governance if registered is not None else None
    raw = manifest_bytes(manifest_from_listing(server_id, listing.identity, listing.tools, governance))
    if save_to is not None:
        save_to.write_bytes(raw)
    try:
        result = catalog_import(raw=raw, via=via, imported_by=imported_by, actor=actor)
    except ManifestError as exc:
        problems = "; ".join(exc.problems[:PROBLEMS_KEPT])
        mcp_server_failed(
            server_id=server_id, message=f"manifest refused, {len(exc.problems)} problem(s): {problems}", actor=actor
        )
        raise
    mcp_server_reached(
        server_id=server_id, listing=listing, command=command, url=url, header_names=sorted(headers or {}), actor=actor
    )
    return result


@transaction.atomic
def mcp_server_reached(
    *,
    server_id: str,
    listing: Listing,
    command: list[str] | None,
    url: str | None,
    header_names: list[str],
    actor: Actor,
) -> McpServer:
    """Record the transport of a successful live import and clear the last failure. The import has stored the
    row already when it wrote a revision; an unchanged listing of a server without one registers it here."""
    after: dict[str, Any] = {
        "transport": McpServer.Transport.STDIO if command is not None else McpServer.Transport.HTTP,
        "command": list(command or []),
        "url": url or "",
        "header_names": header_names,
        "last_error": "",
    }
    server = McpServer.objects.select_for_update().filter(slug=server_id).first()
    if server is None:
        identity = listing.identity
        server = McpServer.objects.create(
            slug=server_id,
            system=mcp_system(server_id),
            name=identity.get("name") or "",
            version=identity.get("version") or "",
            protocol_version=identity.get("protocolVersion") or "",
            title=identity.get("title") or "",
            instructions=identity.get("instructions") or "",
            listing=listing.tools,
        )
    before = {name: getattr(server, name) for name in TRANSPORT_FIELDS}
    if before == after:
        return server  # re-imported the way it was reached last time: nothing to write
    for name, value in after.items():
        setattr(server, name, value)
    server.last_error_at = None
    server.save(update_fields=[*TRANSPORT_FIELDS, "last_error_at"])
    audit_record(
        actor=actor,
        action=AuditAction.MCP_SERVER_REACHED,
        object_type=OBJECT_TYPE,
        object_id=server_id,
        before=before,
        after=after,
    )
    return server


@transaction.atomic
def mcp_server_failed(*, server_id: str, message: str, actor: Actor) -> McpServer | None:
    """Record why a live import of a registered server failed (the console shows it); nothing for a server the
    console does not know yet."""
    server = McpServer.objects.select_for_update().filter(slug=server_id).first()
    if server is None:
        return None
    before = {"last_error": server.last_error}
    server.last_error = message
    server.last_error_at = timezone.now()
    server.save(update_fields=["last_error", "last_error_at"])
    audit_record(
        actor=actor,
        action=AuditAction.MCP_SERVER_FAILED,
        object_type=OBJECT_TYPE,
        object_id=server_id,
        before=before,
        after={"last_error": message},
    )
    return server


def mcp_reimport(*, server_id: str, via: str, imported_by: User | None, actor: Actor, timeout: float) -> ImportResult:
    """Import a registered server again the way it was last reached: its stdio command, or its URL with the
    headers `CONDOR_MCP_HEADERS` gives for it. Unchanged tools write nothing (no revision, no event)."""
    server = McpServer.objects.filter(slug=server_id).first()
    if server is None:
        raise McpFetchError(f"MCP server {server_id!r} is not registered: import it once (manage.py import_mcp)")
    if server.transport == McpServer.Transport.STDIO:
        return mcp_import_live(
            server_id=server_id,
            command=list(server.command),
            timeout=timeout,
            via=via,
            imported_by=imported_by,
            actor=actor,
        )
    if server.transport == McpServer.Transport.HTTP:
        return mcp_import_live(
            server_id=server_id,
            url=server.url,
            headers=_configured_headers(server, actor),
            timeout=timeout,
            via=via,
            imported_by=imported_by,
            actor=actor,
        )
    raise McpFetchError(
        f"{server.system} was imported from a manifest file, not from the live server: import a new file, or "
        "import it live once with manage.py import_mcp so the console knows how to reach it"
    )


def _configured_headers(server: McpServer, actor: Actor) -> dict[str, str]:
    """The headers of a re-import over HTTP: the server's entry in CONDOR_MCP_HEADERS, which must give every
    header the last import sent (their values are never stored)."""
    configured = getattr(settings, "CONDOR_MCP_HEADERS", {}) or {}
    headers = dict(configured.get(server.slug, {}))
    given = {name.lower() for name in headers}
    missing = [name for name in server.header_names if name.lower() not in given]
    if missing:
        message = (
            f"{server.system}: the last import sent the header(s) {', '.join(missing)}, which CONDOR_MCP_HEADERS "
            f"does not give for {server.slug!r}; set them there (values are never stored) and re-import"
        )
        mcp_server_failed(server_id=server.slug, message=message, actor=actor)
        raise McpFetchError(message)
    return headers
