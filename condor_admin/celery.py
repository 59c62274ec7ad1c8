"""The Celery app. With REDIS_URL unset, tasks run in-process (see settings)."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import beat_init, worker_init

from condor_admin.boot import exit_if_refused

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings")

app = Celery("condor_admin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# Celery logs and swallows an Exception raised by a signal handler, so the gate exits the process instead
# (SystemExit is not an Exception, and neither signal's sender catches it).


@worker_init.connect
def run_boot_gate(**kwargs: Any) -> None:
    """The worker refuses to start, before it consumes a single message, when `manage.py check` would fail."""
    exit_if_refused("worker")


@beat_init.connect
def run_beat_boot_gate(**kwargs: Any) -> None:
    """Beat refuses to start, before its first tick sends a task, when `manage.py check` would fail. Also sent
    by a worker's embedded beat (`worker --beat`), which skips it: its worker passed the gate already."""
    exit_if_refused("beat")
