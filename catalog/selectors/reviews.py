"""What a sign-off counts: the tools awaiting it, the approvals that count, how many are required. Read by the
sign-off service (which decides) and by the revision pages (which show the same counts)."""

from __future__ import annotations

from django.db.models import QuerySet

from catalog.domain.descriptor import DECLARED_FIELDS
from catalog.domain.effect import needs_two_signoffs
from catalog.domain.vocabulary import ReviewState
from catalog.models import CatalogRevision, RevisionReview, Tool

UNDECIDED = (ReviewState.PENDING.value, ReviewState.CHANGES_REQUESTED.value)


def awaiting_tools(system: str) -> QuerySet[Tool]:
    """The live tools of a system whose newest declaration is not in effect yet."""
    return Tool.objects.filter(system=system, awaiting_signoff=True).live()


def signoffs_required(revision: CatalogRevision) -> int:
    """2 when any change its approval would put in effect weakens a tier-high tool (recomputed now: a later
    import may have added one), else what the import recorded."""
    rows = awaiting_tools(revision.system).values("in_effect", *DECLARED_FIELDS)
    two = any(needs_two_signoffs(row.pop("in_effect"), row) for row in rows)
    return 2 if two else revision.signoffs_required


def counted_approvals(revision: CatalogRevision) -> QuerySet[RevisionReview]:
    """The approvals that count: those after the last request for changes."""
    reviews = revision.reviews.all()
    last_request = reviews.filter(decision=RevisionReview.Decision.REQUEST_CHANGES).order_by("-created_at").first()
    approvals = reviews.filter(decision=RevisionReview.Decision.APPROVE)
    return approvals.filter(created_at__gt=last_request.created_at) if last_request else approvals
