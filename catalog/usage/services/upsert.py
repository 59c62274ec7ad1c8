"""Add to rows that may already exist, from any number of concurrent web processes, with public ORM calls only.

The rows that exist are locked (in primary-key order) and merged; the others are inserted whole, in key order. A
concurrent export that inserted one of them first makes the insert fail on the unique constraint: the savepoint
rolls back and the round repeats, now finding that row to merge into. The common case, a batch of new minutes or
new tool calls, costs one SELECT and one INSERT; merging costs one UPDATE per batch of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

from django.db import IntegrityError, models, transaction

M = TypeVar("M", bound=models.Model)
K = TypeVar("K", bound=Hashable)

ROUNDS = 3


def upsert(
    model: type[M],
    new: Mapping[K, M],
    *,
    existing: Callable[[], models.QuerySet[M]],
    key: Callable[[M], K],
    merge: Callable[[M, M], None],
    fields: list[str],
) -> list[M]:
    """Every row of `new` stored: merged into the row with its key (`merge(stored, new)`, then `fields` saved) or
    inserted. `existing()` selects a superset of the stored rows with these keys. Returns the rows as stored."""
    if not new:
        return []
    for round_ in range(ROUNDS):
        try:
            with transaction.atomic():
                stored = {}
                for row in existing().select_for_update().order_by("pk"):
                    if key(row) in new:
                        merge(row, new[key(row)])
                        stored[key(row)] = row
                model._default_manager.bulk_update(list(stored.values()), fields, batch_size=500)
                created = [new[k] for k in sorted(new, key=_order) if k not in stored]
                model._default_manager.bulk_create(created, batch_size=1000)
                return list(stored.values()) + created
        except IntegrityError:
            if round_ == ROUNDS - 1:
                raise
    raise AssertionError("unreachable")


def _order(k: Any) -> Any:
    return k
