from __future__ import annotations

from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals"

    def ready(self) -> None:
        # Register the Celery tasks in every process, the web's too: services start them by their registered
        # name after commit (approvals.services.common.enqueue), with or without a broker.
        from approvals import checks, tasks  # noqa: F401  (checks: the settings' boot check)
        from approvals.selectors import spent_approvals
        from catalog.core.evidence import register_spent_lookup

        # The telemetry ingest asks which tool calls an approval was spent for (catalog never imports approvals).
        register_spent_lookup(spent_approvals)
