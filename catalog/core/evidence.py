"""Which tool calls an approval was spent for: asked by the ingest service, answered by the approvals app.

`catalog` never imports `approvals`; the approvals app registers its lookup when it starts (approvals/apps.py).
With none registered (an install without the approvals app), nothing counts as approved: a tier-high execution
under a clinical profile is then always a finding (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class SpentApproval:
    request_id: str  # the approval request's id, as the runtime may stamp it (condor.approval_id)
    tool_call_id: str  # the tool call it was consumed for ("" when consumed without one)
    tool_pk: int


# (tool call ids, approval request ids) → the consumed approvals that match either.
SpentLookup = Callable[[Collection[str], Collection[str]], list[SpentApproval]]

_lookup: SpentLookup | None = None


def register_spent_lookup(lookup: SpentLookup) -> None:
    global _lookup
    _lookup = lookup


def spent_approvals(tool_call_ids: Collection[str], request_ids: Collection[str]) -> list[SpentApproval]:
    if _lookup is None or not (tool_call_ids or request_ids):
        return []
    return _lookup(tool_call_ids, request_ids)
