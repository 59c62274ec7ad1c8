"""The boot gate for every long-running process: web (gunicorn), Celery worker and Celery beat.

They refuse to start under exactly the condition that makes `manage.py check` fail: a serious, unsilenced system
check message (the clinical-profile gate, condor.E001 in catalog/checks.py, is the one that matters), and print
each message as Django's check command prints it (`obj: (id) text` and a `HINT:` line), so an operator reads the
same words from every process.

This module imports no app code: condor_admin/__init__.py loads the Celery app (and so this module) while the
settings are still being read, before any model can be imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import django
from django.apps import apps
from django.core import checks
from django.db import connections

# The pid of the process that passed the gate; forks inherit it (see gate()).
_passed_in: int | None = None


class BootRefused(RuntimeError):
    """The gate's refusal, its text the report. An Exception rather than SystemExit on purpose: a gunicorn
    worker that exits with SystemExit while loading the application is respawned for ever, one that raises an
    Exception before it booted exits with WORKER_BOOT_ERROR and the arbiter halts."""


def serious_messages() -> list[checks.CheckMessage]:
    """The messages that make `manage.py check` fail: ERROR or worse and not in SILENCED_SYSTEM_CHECKS (the
    same filter as BaseCommand.check); deployment-only checks are left out, as `check` without --deploy does."""
    return [m for m in checks.run_checks() if m.is_serious() and not m.is_silenced()]


def refusal(process: str, errors: Sequence[checks.CheckMessage]) -> str:
    """The one report every process prints: a headline naming the process, then each message as `check`
    renders it (str(CheckMessage) is the very line Django's check command writes)."""
    lines = [f"{process} refused to start: {len(errors)} system check error(s), as `manage.py check` reports:"]
    lines.extend(str(message) for message in errors)
    return "\n".join(lines)


def gate(process: str) -> None:
    """Run the checks; raise BootRefused with the report when any is serious.

    Once per process tree: a process forked from one that passed (a gunicorn worker from its arbiter, the beat
    a worker embeds with `--beat`) skips the run, and so never queries over a connection its parent opened.
    """
    global _passed_in
    if passed():
        return
    if not apps.ready:
        # Only when nothing set Django up yet (the gunicorn arbiter): django.setup() reconfigures logging, and
        # under beat, which set it up already, that would route its log into its own stdout proxy and lose it.
        django.setup()
    try:
        errors = serious_messages()
    finally:
        # A gunicorn arbiter forks its workers next: they must not share the socket the checks opened.
        connections.close_all()
    if errors:
        raise BootRefused(refusal(process, errors))
    _passed_in = os.getpid()


def passed() -> bool:
    """Whether the gate passed in this process or in the process it was forked from."""
    return _passed_in is not None


def exit_if_refused(process: str) -> None:
    """The gate for hosts that swallow exceptions (Celery's signal dispatch logs and ignores them) or where
    exiting is the documented way to stop (a gunicorn server hook): print the report, exit with status 1.

    The report goes to the process's real stderr: beat has replaced sys.stderr with a proxy into its logger by
    then, which would prefix the lines or, when logging is not set up, drop them."""
    try:
        gate(process)
    except BootRefused as refused:
        print(refused, file=sys.__stderr__ or sys.stderr, flush=True)
        raise SystemExit(1) from None
