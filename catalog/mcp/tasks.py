"""The console's re-import of a registered MCP server, on the worker (a server start takes seconds).

Idempotent: an unchanged server writes nothing. A failure is not retried: the server's row records it
(`last_error`), which the console shows, and the next re-import tries again.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.contrib.auth import get_user_model

from catalog.core.audit import Actor
from catalog.domain.manifest import ManifestError
from catalog.mcp.domain.fetch import McpFetchError
from catalog.mcp.services import DEFAULT_TIMEOUT_SECONDS, REIMPORT_SERVER_TASK, mcp_reimport

log = logging.getLogger(__name__)


@shared_task(name=REIMPORT_SERVER_TASK, acks_late=True, reject_on_worker_lost=True)
def reimport_server(server_id: str, user_id: int | None) -> str:
    """Re-import `mcp:<server_id>` as the user who asked for it; returns the import summary or the failure."""
    user = get_user_model().objects.filter(pk=user_id).first() if user_id is not None else None
    via = f"console re-import {server_id}"
    actor = Actor.for_user(user) if user is not None else Actor(label=via)
    try:
        result = mcp_reimport(
            server_id=server_id, via=via, imported_by=user, actor=actor, timeout=DEFAULT_TIMEOUT_SECONDS
        )
    except McpFetchError as exc:
        log.warning("re-import of mcp:%s failed: %s", server_id, exc.message)
        return exc.message
    except ManifestError as exc:
        log.warning("re-import of mcp:%s refused: %s", server_id, exc)
        return str(exc)
    return result.summary()
