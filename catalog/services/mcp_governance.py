"""A catalog admin's governance overlay for an MCP server, applied as an import of the server's last listing."""

from __future__ import annotations

from celery import current_app
from django.contrib.auth.models import User
from django.db import transaction

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.domain.manifest import ManifestError
from catalog.domain.manifest.mcp import OVERLAY_RULES_MAX
from catalog.domain.mcp import editor_problem, parse_overlay_lines
from catalog.mcp.domain.listing import manifest_bytes, manifest_from_listing
from catalog.mcp.services import REIMPORT_SERVER_TASK
from catalog.models import McpServer
from catalog.services.imports import ImportResult, catalog_import


class GovernanceRefused(Exception):
    """The overlay cannot be applied; `problems` say where (lines of the editor, or the manifest's locations)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def mcp_governance_update(
    *, server_id: str, team: str | None, policy_domain: str | None, rules_text: str, user: User
) -> ImportResult:
    """A catalog admin's new overlay for a registered server: its last listing imported again with it, so the
    change is a revision like any other (strengthening at once, weakening after sign-off). Nothing is written when
    anything is refused."""
    server = McpServer.objects.filter(slug=server_id).first()
    if server is None:
        raise GovernanceRefused([f"server: no registered MCP server {server_id!r}"])
    rules, problems, lines = parse_overlay_lines(rules_text, max_lines=OVERLAY_RULES_MAX)
    if problems:
        raise GovernanceRefused(problems)
    governance = {"team": team or None, "policyDomain": policy_domain or None, "tools": rules}
    identity = {
        "name": server.name,
        "version": server.version,
        "protocolVersion": server.protocol_version,
        "title": server.title or None,
        "instructions": server.instructions or None,
    }
    doc = manifest_from_listing(server.slug, identity, list(server.listing), governance)
    try:
        return catalog_import(raw=manifest_bytes(doc), via="console: governance overlay", imported_by=user)
    except ManifestError as exc:
        raise GovernanceRefused([editor_problem(p, lines) for p in exc.problems]) from exc


def mcp_reimport_request(*, server_id: str, user: User) -> None:
    """A catalog admin asks for a live re-import of a registered server: audited, then run by the worker after
    commit (in this process when no broker is configured). A server known only from a file cannot be reached."""
    server = McpServer.objects.filter(slug=server_id).first()
    if server is None:
        raise GovernanceRefused([f"no registered MCP server {server_id!r}"])
    if server.transport == McpServer.Transport.FILE:
        raise GovernanceRefused(
            [f"{server_id} came from a file: import it once with manage.py import_mcp so the console can reach it"]
        )
    with transaction.atomic():
        audit_record(
            actor=Actor.for_user(user),
            action=AuditAction.MCP_REIMPORT_REQUESTED,
            object_type="catalog.mcpserver",
            object_id=server.slug,
            after={"transport": server.transport},
        )
        transaction.on_commit(lambda: current_app.tasks[REIMPORT_SERVER_TASK].delay(server.slug, user.pk))
