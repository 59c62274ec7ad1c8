"""The Celery app. With REDIS_URL unset, tasks run in-process (see settings)."""

from __future__ import annotations

import os
import sys

import django
from celery import Celery
from celery.signals import worker_init
from django.core import checks

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings")

app = Celery("condor_admin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def run_boot_gate(**kwargs: object) -> None:
    """The worker refuses to start when a system check fails (the clinical-profile boot gate).

    Celery logs and swallows exceptions raised by signal handlers, so this exits the process instead.
    """
    django.setup()
    errors = [m for m in checks.run_checks() if m.is_serious()]
    if errors:
        for message in errors:
            print(f"{message.id}: {message.msg}\n  HINT: {message.hint}", file=sys.stderr)
        raise SystemExit(f"worker refused to start: {len(errors)} system check error(s)")
