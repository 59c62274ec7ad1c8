from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.core.audit import Actor
from catalog.domain.manifest import ManifestError
from catalog.management.commands.import_catalog import importer, progress_on, refusal_text
from catalog.mcp.domain.fetch import McpFetchError
from catalog.mcp.services import DEFAULT_TIMEOUT_SECONDS, mcp_import_live


class Command(BaseCommand):
    help = (
        "Import a live MCP server's tools as the catalog mcp:ID: start it over stdio "
        "(import_mcp --server ID -- COMMAND [ARG ...]) or reach it over Streamable HTTP "
        "(import_mcp --server ID --url URL [--header 'Name: value' ...]). Nothing changes if it fails."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--server", required=True, help="the server id: its catalog is mcp:ID")
        parser.add_argument("--url", help="the Streamable HTTP endpoint (usually ending in /mcp)")
        parser.add_argument(
            "--header",
            action="append",
            default=[],
            help="'Name: value' sent with every HTTP request (repeatable); only the names are stored",
        )
        parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, help="seconds for it all")
        parser.add_argument(
            "--save", type=Path, help="also write the manifest here (before the import, so a refused one is kept)"
        )
        parser.add_argument("--as", dest="username", help="record this user as the importer (see import_catalog)")
        parser.add_argument("command", nargs="*", help="after --: the command that starts the server over stdio")

    def handle(self, *args: Any, server: str, url: str | None, command: list[str], **options: Any) -> None:
        if bool(url) == bool(command):
            raise CommandError("give either --url URL or, after --, the command that starts the server (not both)")
        if command and options["header"]:
            raise CommandError("--header is for --url: a server started over stdio gets no HTTP headers")
        if options["timeout"] <= 0:
            raise CommandError("--timeout must be more than 0 seconds")
        user = importer(options["username"])
        via = f"cli import_mcp {server}"
        try:
            with progress_on(self.stderr if options["verbosity"] >= 1 else None):
                result = mcp_import_live(
                    server_id=server,
                    command=command or None,
                    url=url,
                    headers=parse_headers(options["header"]),
                    timeout=options["timeout"],
                    via=via,
                    imported_by=user,
                    actor=Actor.for_user(user) if user is not None else Actor(label=via),
                    save_to=options["save"],
                )
        except McpFetchError as exc:
            raise CommandError(f"{exc.message}; nothing was changed") from None
        except OSError as exc:
            raise CommandError(f"--save {options['save']}: {exc.strerror}; nothing was changed") from None
        except ManifestError as exc:
            raise CommandError(refusal_text(f"mcp:{server}", exc)) from None
        self.stdout.write(result.summary())


def parse_headers(given: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in given:
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            raise CommandError(f"--header {item!r}: expected 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers
