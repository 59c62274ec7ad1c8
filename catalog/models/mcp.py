"""A registered MCP server: how the console reaches it, who governs it, and what it last listed."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from catalog.domain.vocabulary import MCP_SERVER_ID_MAX, SYSTEM_MAX


class McpServer(models.Model):
    """One MCP server, the catalog `mcp:<slug>`. Written by the MCP import service only (the governance overlay is
    edited through it too, so every change is a catalog revision).

    Header values are never stored: a server reached with `--header` is re-imported from the console only when
    `CONDOR_MCP_HEADERS` gives its headers (TOOLS.md)."""

    class Transport(models.TextChoices):
        STDIO = "stdio"
        HTTP = "http"
        FILE = "file"

    slug = models.CharField(max_length=MCP_SERVER_ID_MAX, unique=True)
    system = models.CharField(max_length=SYSTEM_MAX, unique=True)
    # The identity from the server's `initialize` result, as of the last import.
    name = models.CharField(max_length=200, blank=True)
    version = models.CharField(max_length=40, blank=True)
    protocol_version = models.CharField(max_length=40, blank=True)
    title = models.CharField(max_length=200, blank=True)
    instructions = models.TextField(blank=True)
    transport = models.CharField(max_length=10, choices=Transport.choices, default=Transport.FILE)
    command = models.JSONField(default=list, blank=True, help_text="stdio: the command and its arguments")
    url = models.CharField(max_length=2000, blank=True, help_text="Streamable HTTP: the endpoint")
    header_names = models.JSONField(default=list, blank=True, help_text="the headers sent (names only)")
    governance = models.JSONField(null=True, blank=True, help_text="the overlay, as the manifest's governance section")
    listing = models.JSONField(default=list, blank=True, help_text="the tools/list result of the last import")
    last_imported_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, help_text="why the last live re-import failed (empty after a success)")
    last_error_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(transport__in=["stdio", "http", "file"]), name="mcp_transport_valid"
            )
        ]

    def __str__(self) -> str:
        return self.system
