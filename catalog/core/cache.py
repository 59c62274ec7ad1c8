"""The per-catalog-version cache: values derived from the live catalog (indexes, filter choices), rebuilt when an
import records a new revision."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from catalog.models import CatalogState


def catalog_version() -> Version:
    """What names the live catalog exactly: each system's current revision and its last sign-off. One small query.

    In-process caches of the catalog (owner lookup, the approvals gate, resolve) rebuild when it changes. The
    revision's creation time is part of it because ids alone can repeat after a test's rollback. Every API call
    that consults the catalog asks this first.
    """
    rows = CatalogState.objects.order_by("system").values_list(
        "system", "current_revision_id", "current_revision__created_at", "signed_off_at"
    )
    return tuple(tuple(row) for row in rows)


Version = tuple[tuple[object, ...], ...]


T = TypeVar("T")


class PerCatalogVersion(Generic[T]):
    """A value derived from the live catalog (an index, the filter choices), kept until catalog_version()
    changes: one small query per use, `build(version)` once per change. Anything it derives must be written
    only by imports (which always record a new revision) and sign-offs (which stamp `signed_off_at`)."""

    def __init__(self, build: Callable[[Version], T]) -> None:
        self._build = build
        self._kept: tuple[Version, T] | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        version = catalog_version()
        kept = self._kept
        if kept is not None and kept[0] == version:
            return kept[1]
        with self._lock:  # one rebuild per change, however many threads notice it
            if self._kept is None or self._kept[0] != version:
                self._kept = (version, self._build(version))
            return self._kept[1]

    def forget(self) -> None:
        """Drop the value (tests that roll the database back reuse revision ids)."""
        self._kept = None
