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

# The import's steps and, with no broker (tasks run in this process), each embedding batch and the sibling refresh.
PROGRESS_LOGGERS = ("condor.import", "catalog.rag.services.vectors", "catalog.rag.services.siblings")
# With no broker the import's tasks run in this process and celery logs each one as a worker would ("Task … succeeded
# in 0.6 s"): a worker's bookkeeping, which fell between the progress lines. A task's failure (WARNING and up) shows.
QUIET_LOGGERS = ("celery.app.trace",)


class _Hold(logging.Filter):
    """Keeps the records a handler is given instead of letting it write them, to be handled later, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False


@contextmanager
def progress_on(stream: Any) -> Iterator[None]:
    """Show the progress log lines on `stream` (none when it is None) while the import runs, each once.

    The progress loggers stop propagating meanwhile: the root logger's console handler (settings.LOGGING) also
    writes to stderr, and printed every progress line a second time. The process's other log lines (an in-process
    task's, the audit log's checkpoints, which must reach stderr whatever the level) are held until the import is
    over and then written in order, so that they follow the progress instead of cutting through it.
    """
    if stream is None:
        yield
        return
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    progress = [logging.getLogger(name) for name in PROGRESS_LOGGERS]
    quiet = [logging.getLogger(name) for name in QUIET_LOGGERS]
    saved = [(lg, lg.level, lg.propagate) for lg in progress + quiet]
    held = [(h, _Hold()) for h in logging.getLogger().handlers]
    for lg in progress:
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
        lg.propagate = False
    for lg in quiet:
        lg.setLevel(max(lg.getEffectiveLevel(), logging.WARNING))
    for h, hold in held:
        h.addFilter(hold)
    try:
        yield
    finally:
        for lg in progress:
            lg.removeHandler(handler)
        for lg, level, propagate in saved:
            lg.setLevel(level)
            lg.propagate = propagate
        for h, hold in held:
            h.removeFilter(hold)
            for record in hold.records:
                h.handle(record)


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
            raise CommandError(refusal_text(str(file), exc)) from exc
        self.stdout.write(result.summary())


def refusal_text(where: str, exc: ManifestError) -> str:
    """A refused manifest as the commands print it: the count of every problem, then the first ones (bounded)."""
    lines = "\n".join(f"  {problem}" for problem in exc.listed())
    return f"{where}: manifest refused, {len(exc.problems):,} problem(s); nothing was changed:\n{lines}"


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
