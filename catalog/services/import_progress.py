"""Progress of a large import, step by step, as log lines on the `condor.import` logger (`manage.py
import_catalog` shows them on stderr; an API import writes them to the server log). A 20,000-tool import takes
minutes end to end: its importer should see it move, and where the time goes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("condor.import")


class ImportProgress:
    def __init__(self, on_step: Callable[[str], None] | None = None) -> None:
        self.system = "catalog"  # until the manifest says which
        self.on_step = on_step  # an import job's status (catalog.services.import_jobs)
        self.started = self.last = time.perf_counter()

    def step(self, what: str) -> None:
        now = time.perf_counter()
        log.info("%s import: %s (%.1f s, %.1f s in all)", self.system, what, now - self.last, now - self.started)
        self.last = now
        if self.on_step is not None:
            self.on_step(what)
