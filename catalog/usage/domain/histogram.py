"""Duration histograms with fixed bucket bounds, so rollups of any two minutes (or tools) add up bucket by bucket.

The bounds are OpenTelemetry's default explicit bucket boundaries for durations in milliseconds, extended to one
minute: a tool call of 7 ms counts in the bucket (5, 10]; one over the last bound in the overflow bucket.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

BOUNDS_MS: tuple[float, ...] = (5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000, 30000, 60000)
SIZE = len(BOUNDS_MS) + 1  # the last bucket holds everything above the last bound


def empty() -> list[int]:
    return [0] * SIZE


def bucket_of(duration_ms: float) -> int:
    """The index of the bucket `duration_ms` counts in (upper bounds inclusive, as OpenTelemetry's)."""
    return bisect_left(BOUNDS_MS, duration_ms)


def merged(histograms: Iterable[Sequence[int]]) -> list[int]:
    """The bucket-wise sum; a stored histogram of another length (never written by this code) counts as empty."""
    total = empty()
    for counts in histograms:
        if len(counts) == SIZE:
            for i, n in enumerate(counts):
                total[i] += int(n)
    return total


def quantile(counts: Sequence[int], q: float) -> float | None:
    """The q-quantile (0 < q < 1) estimated from bucket counts, interpolating linearly inside the bucket that holds
    it (as Prometheus' histogram_quantile does); None without calls. The overflow bucket answers its lower bound."""
    total = sum(counts)
    if total <= 0:
        return None
    rank = q * total
    seen = 0
    for i, n in enumerate(counts):
        if n and seen + n >= rank:
            if i == len(BOUNDS_MS):
                return float(BOUNDS_MS[-1])
            lower = 0.0 if i == 0 else float(BOUNDS_MS[i - 1])
            upper = float(BOUNDS_MS[i])
            return lower + (upper - lower) * (rank - seen) / n
        seen += n
    return float(BOUNDS_MS[-1])
