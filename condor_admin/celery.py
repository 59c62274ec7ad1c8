"""The Celery app. With REDIS_URL unset, tasks run in-process (see settings)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings")

app = Celery("condor_admin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
