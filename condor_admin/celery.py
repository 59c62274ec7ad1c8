"""The Celery app. With REDIS_URL unset, tasks run in-process (see settings)."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings")

app = Celery("condor_admin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def run_boot_gate(**kwargs: object) -> None:
    """The worker refuses to start when the system checks fail (the clinical-profile boot gate)."""
    import django
    from django.core import checks
    from django.core.management.base import SystemCheckError

    django.setup()
    errors = [m for m in checks.run_checks() if m.is_serious()]
    if errors:
        raise SystemCheckError("\n".join(f"{m.id}: {m.msg}" for m in errors))
