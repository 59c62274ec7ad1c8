from __future__ import annotations

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"

    def ready(self) -> None:
        from catalog import checks  # noqa: F401  (registers the boot gate)
