from __future__ import annotations

# The Celery app is loaded with Django so that shared_task binds to it.
from condor_admin.celery import app as celery_app

__all__ = ("celery_app",)
