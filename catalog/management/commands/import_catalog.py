from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.domain.manifest import ManifestError
from catalog.selectors.effect import clinical_profiles_exist
from catalog.services.imports import catalog_import

# The import's steps and, with no broker (tasks run in this process), each embedding batch.
PROGRESS_LOGGERS = ("condor.import", "catalog.rag.services.vectors")


@contextmanager
def progress_on(stream: Any) -> Iterator[None]:
    """Show the progress log lines on `stream` (none when it is None) while the import runs."""
    if stream is None:
        yield
        return
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    loggers = [logging.getLogger(name) for name in PROGRESS_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)


class Command(BaseCommand):
    help = "Import a catalog manifest (condor-catalog/v1 or tucan-tools/v1). Nothing changes if it has any problem."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--as",
            dest="username",
            help="record this user as the importer (required once a clinical profile exists; they cannot sign it off)",
        )

    def handle(self, *args: Any, file: Path, username: str | None, **options: Any) -> None:
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise CommandError(f"{file}: {exc.strerror}") from exc
        user = importer(username)
        try:
            with progress_on(self.stderr if options["verbosity"] >= 1 else None):
                result = catalog_import(raw=raw, via=f"cli {file.name}", imported_by=user)
        except ManifestError as exc:
            lines = "\n".join(f"  {problem}" for problem in exc.problems)
            raise CommandError(
                f"{file}: manifest refused, {len(exc.problems)} problem(s); nothing was changed:\n{lines}"
            ) from exc
        self.stdout.write(result.summary())


def importer(username: str | None) -> Any:
    """The user `--as` names (import_catalog, import_mcp); required once a clinical profile exists."""
    if username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"--as {username}: no such user")
        return user
    if clinical_profiles_exist():
        raise CommandError(
            "--as USERNAME is required once a clinical profile exists: the import names the person who answers "
            "for it, and a sign-off must come from someone else; nothing was changed"
        )
    return None
