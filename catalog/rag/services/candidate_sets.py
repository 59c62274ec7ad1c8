"""What the resolve API served: each candidate set it gave out is remembered (catalog.models.CandidateSet), so an
approval request or a span that names its candidateSetId can be checked against the tools it offered."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from catalog.models import CandidateSet
from catalog.rag.domain.resolution import Snapshot


def candidate_set_record(*, snapshot: Snapshot, now: datetime | None = None) -> None:
    """Remember the snapshot's set as served now: one UPDATE when it was served before (the common case: a set
    id is the same for the same tools under the same catalog), an INSERT beside it the first time.

    Not one transaction, and no audit event: each statement stands alone, and two first serves at once insert one
    row (the unique set id; the loser's INSERT is ignored). The profile is the one it was last served for (a set
    id names tools and a catalog revision, not a profile)."""
    now = now or timezone.now()
    served = CandidateSet.objects.filter(set_id=snapshot.candidate_set_id).update(
        last_served_at=now, profile=snapshot.profile
    )
    if served:
        return
    CandidateSet.objects.bulk_create(
        [
            CandidateSet(
                set_id=snapshot.candidate_set_id,
                system=snapshot.system,
                profile=snapshot.profile,
                tool_keys=list(snapshot.tool_ids),
                created_at=now,
                last_served_at=now,
            )
        ],
        ignore_conflicts=True,
    )
