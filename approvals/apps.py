from __future__ import annotations

from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals"

    def ready(self) -> None:
        # Register the Celery tasks in every process, the web's too: services start them by their registered
        # name after commit (approvals.services.common.enqueue), with or without a broker.
        from approvals import tasks  # noqa: F401
