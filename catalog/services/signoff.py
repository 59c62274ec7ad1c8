"""Signing off a revision: the safety officer's decision that changes what clinical profiles are served.

The rules (TOOLS.md, "What is in effect"), the same for the page, the API and `manage.py signoff`:
- only an active safety officer decides, never the person who imported the revision, nor anyone who imported a
  change still waiting that the sign-off would put in effect (an older undecided revision it covers);
- only a system's newest undecided revision is approved: its sign-off covers every change still waiting
  (the older undecided ones are marked superseded by it); changes may be requested on any undecided revision;
- a weakening change to a tier-high tool needs two approvals from different safety officers (approvals given
  before a request for changes no longer count);
- approving puts the newest declaration of every tool awaiting sign-off in effect; requesting changes keeps
  what is in effect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.core.permissions import is_safety_officer
from catalog.domain.vocabulary import ReviewState
from catalog.models import CatalogRevision, CatalogState, RevisionReview, Tool
from catalog.selectors.reviews import UNDECIDED, awaiting_tools, counted_approvals, signoffs_required
from catalog.selectors.served import signed_sections_now
from catalog.services.governance import GovernanceRefused

COMMENT_MAX_CHARS = 4000


@dataclass(frozen=True)
class SignoffResult:
    review: RevisionReview
    revision: CatalogRevision
    approvals: int  # counted approvals of this revision after this decision
    required: int
    applied: int  # tools whose newest declaration went into effect (0 unless the revision is now approved)

    @property
    def in_effect(self) -> bool:
        return self.revision.review_state == ReviewState.APPROVED


def _checked_input(reviewer: Any, decision: str, comment: str) -> str:
    if not reviewer.is_active:  # `manage.py signoff --as` names a user without signing them in
        raise GovernanceRefused(f"{reviewer.get_username()} is deactivated and cannot sign off", forbidden=True)
    if not is_safety_officer(reviewer):
        raise GovernanceRefused("only a safety officer may sign off a revision", forbidden=True)
    if decision not in RevisionReview.Decision.values:
        raise GovernanceRefused(f"decision must be one of {', '.join(RevisionReview.Decision.values)}")
    comment = (comment or "").strip()
    if not comment:
        raise GovernanceRefused(_("say what you checked, or what must change"), field="comment")
    if len(comment) > COMMENT_MAX_CHARS:
        raise GovernanceRefused(
            _("%(n)s characters; at most %(max)s") % {"n": len(comment), "max": COMMENT_MAX_CHARS}, field="comment"
        )
    return comment


def _lock(revision_id: int) -> CatalogRevision:
    """Lock the system (the row imports lock, so no import lands between reading and applying) and the revision."""
    system = CatalogRevision.objects.values_list("system", flat=True).get(pk=revision_id)
    CatalogState.objects.select_for_update().filter(system=system).first()
    return CatalogRevision.objects.select_for_update().get(pk=revision_id)


def _refusal(revision: CatalogRevision, reviewer: Any, decision: str) -> GovernanceRefused | None:
    """Why this reviewer may not take this decision on this revision now, or None."""
    if revision.imported_by_id is not None and revision.imported_by_id == reviewer.pk:
        return GovernanceRefused(f"you imported {revision}; another safety officer must sign it off", forbidden=True)
    if decision == RevisionReview.Decision.APPROVE:
        # Approving puts in effect every change still waiting in the system, also those of the older undecided
        # revisions it covers: none of them may be the reviewer's own (an importer who waited for someone else's
        # later import could otherwise approve their own change inside it).
        own = (
            CatalogRevision.objects.filter(
                system=revision.system, number__lt=revision.number, review_state__in=UNDECIDED, imported_by=reviewer
            )
            .order_by("number")
            .first()
        )
        if own is not None:
            return GovernanceRefused(
                f"you imported {own}, whose changes this sign-off would put in effect; another safety officer must "
                "sign it off",
                forbidden=True,
            )
    if decision == RevisionReview.Decision.APPROVE and counted_approvals(revision).filter(reviewer=reviewer).exists():
        return GovernanceRefused(
            f"you already approved {revision}; a second safety officer must approve it too", forbidden=True
        )
    message = _state_refusal(revision, decision)
    return GovernanceRefused(message) if message else None


def _state_refusal(revision: CatalogRevision, decision: str) -> str | None:
    if revision.review_state == ReviewState.APPROVED:
        how = "automatically (nothing waits for sign-off)" if revision.auto_approved else "already"
        return f"{revision} was approved {how}; nothing to decide"
    if revision.review_state == ReviewState.SUPERSEDED:
        by = revision.superseded_by
        return f"{revision} was superseded by {by}: a sign-off of it put these changes in effect"
    if decision != RevisionReview.Decision.APPROVE:
        return None
    newer = (
        CatalogRevision.objects.filter(system=revision.system, number__gt=revision.number, review_state__in=UNDECIDED)
        .order_by("-number")
        .first()
    )
    if newer is not None:
        return f"{newer} is newer and also waits for sign-off: review {newer}, its sign-off covers this revision too"
    return None


def revision_review(
    *, revision_id: int, reviewer: Any, decision: str, comment: str, via: str = "console"
) -> SignoffResult:
    """Approve or request changes on a revision (the rules are in the module docstring). Raises GovernanceRefused
    with a message for the reviewer; nothing changes then. `via` is recorded in the audit event: "console" for a
    signed-in officer, "cli --as" for `manage.py signoff`, which names the officer without their signing in."""
    comment = _checked_input(reviewer, decision, comment)
    with transaction.atomic():
        revision = _lock(revision_id)
        refusal = _refusal(revision, reviewer, decision)
        if refusal is not None:
            raise refusal
        before = revision.review_state
        review = RevisionReview.objects.create(revision=revision, reviewer=reviewer, decision=decision, comment=comment)
        required = signoffs_required(revision)
        approvals = counted_approvals(revision).values("reviewer").distinct().count()
        applied = 0
        if decision == RevisionReview.Decision.REQUEST_CHANGES:
            revision.review_state = ReviewState.CHANGES_REQUESTED.value
        elif approvals >= required:
            applied = _put_in_effect(revision)
            revision.review_state = ReviewState.APPROVED.value
        revision.signoffs_required = required
        revision.save(update_fields=["review_state", "signoffs_required"])
        audit_record(
            actor=Actor.for_user(reviewer),
            action=AuditAction.CATALOG_REVISION_REVIEWED,
            object_type="catalog.revision",
            object_id=str(revision),
            before={"review_state": before},
            after={
                "review_state": revision.review_state,
                "decision": decision,
                "comment": comment,
                "approvals": approvals if decision == RevisionReview.Decision.APPROVE else 0,
                "required": required,
                "put_in_effect": applied,
                "via": via,
            },
        )
    return SignoffResult(review, revision, approvals, required, applied)


def _put_in_effect(revision: CatalogRevision) -> int:
    """The newest declaration of every awaiting tool goes into effect, and the system's stored profiles and forced
    floors (`signed_sections`); older undecided revisions are superseded. Stamps the system's `signed_off_at`, so
    every process's cached catalog rebuilds."""
    tools = list(awaiting_tools(revision.system))
    for tool in tools:
        tool.in_effect = tool.declared()
        tool.in_effect_text_sha256 = tool.rag_text_sha256
        tool.in_effect_revision = revision
        tool.awaiting_signoff = False
    Tool.objects.bulk_update(
        tools, ["in_effect", "in_effect_text_sha256", "in_effect_revision", "awaiting_signoff"], batch_size=500
    )
    CatalogRevision.objects.filter(
        system=revision.system, number__lt=revision.number, review_state__in=UNDECIDED
    ).update(review_state=ReviewState.SUPERSEDED.value, superseded_by=revision)
    CatalogState.objects.filter(system=revision.system).update(
        signed_off_at=timezone.now(), signed_sections=signed_sections_now(revision.system)
    )
    return len(tools)
