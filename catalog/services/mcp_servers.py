"""MCP servers as catalogs: the registration an import keeps current (identity, overlay, last listing).

The transport a live import used and its failures are recorded by `catalog.mcp.services`; the overlay is changed
only by importing a manifest with it (from the console too), so every change of an MCP tool's owner, domain or tier
is a revision a safety officer reviews like any other.
"""

from __future__ import annotations

from django.utils import timezone

from catalog.domain.manifest import Manifest
from catalog.domain.vocabulary import mcp_server_of
from catalog.models import CatalogRevision, McpServer


def mcp_server_store(manifest: Manifest, revision: CatalogRevision | None) -> McpServer | None:
    """Create or update the server's row from an `mcp-tools/v1` manifest just imported (inside its transaction;
    the import's audit event records it). Nothing for the other dialects."""
    server_id = mcp_server_of(manifest.system)
    if server_id is None or manifest.mcp is None:
        return None
    identity = manifest.mcp["server"]
    server, _ = McpServer.objects.update_or_create(
        slug=server_id,
        defaults={
            "system": manifest.system,
            "name": identity.get("name") or "",
            "version": identity.get("version") or "",
            "protocol_version": identity.get("protocolVersion") or "",
            "title": identity.get("title") or "",
            "instructions": identity.get("instructions") or "",
            "governance": manifest.mcp.get("governance"),
            "listing": manifest.mcp.get("tools") or [],
            "last_imported_at": revision.created_at if revision is not None else timezone.now(),
        },
    )
    return server
