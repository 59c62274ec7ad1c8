from __future__ import annotations

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"

    def ready(self) -> None:
        # checks: registers the boot gate. tasks: registers the Celery tasks in every process, the web's too:
        # services start them by their registered name after commit (catalog.rag.services.vectors), with or
        # without a broker.
        from catalog import checks, tasks  # noqa: F401
        from catalog.core import admin_audit  # noqa: F401  (its signal receivers: admin role changes audited)
