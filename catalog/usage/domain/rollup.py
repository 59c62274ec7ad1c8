"""One tool's calls in one bucket (a minute, or an hour once compacted), as the rollup rows store them. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catalog.usage.domain import histogram
from catalog.usage.domain.spans import Execution

ERROR_TYPES_MAX = 16  # distinct error.type values kept per tool and bucket; the rest count as "other"


@dataclass
class Rollup:
    calls: int = 0
    errors: int = 0
    retries: int = 0
    duration_ms_sum: float = 0.0
    error_types: dict[str, int] = field(default_factory=dict)
    duration_counts: list[int] = field(default_factory=histogram.empty)

    def add(self, e: Execution) -> None:
        self.calls += 1
        self.duration_ms_sum += e.duration_ms
        self.duration_counts[histogram.bucket_of(e.duration_ms)] += 1
        if e.attempt is not None and e.attempt > 1:
            self.retries += 1
        if e.error_type:
            self.errors += 1
            self.error_types[e.error_type] = self.error_types.get(e.error_type, 0) + 1


def merge_error_types(stored: Mapping[str, Any] | None, new: Mapping[str, int]) -> dict[str, int]:
    """Counts per error type added up, at most ERROR_TYPES_MAX kinds (a new kind past them counts as "other")."""
    merged = {k: int(v) for k, v in (stored or {}).items()}
    for kind, n in new.items():
        if kind not in merged and len(merged) >= ERROR_TYPES_MAX:
            kind = "other"
        merged[kind] = merged.get(kind, 0) + int(n)
    return merged
