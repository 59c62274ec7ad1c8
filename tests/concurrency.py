"""Work released at the same moment in threads, each with its own database connection (the race tests on PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections


def at_once(work: Callable[[int], Any], n: int) -> list[Any]:
    """Run work(0..n-1) in n threads released together; each result is a value or the exception raised."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except Exception as exc:  # collected and asserted on by the caller
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results
