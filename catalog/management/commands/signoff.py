from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.models import CatalogRevision, RevisionReview
from catalog.services.governance import GovernanceRefused
from catalog.services.signoff import revision_review


class Command(BaseCommand):
    help = (
        "Sign off a catalog revision (or request changes) as a safety officer, by the same rules as the revision page: "
        "never the importer, only the system's newest undecided revision, two officers for a weakening change to a "
        "tier-high tool. Exit status 1 with the reason when refused."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("system", help="condor or tucan")
        parser.add_argument("revision", help="the revision number (r3 or 3)")
        parser.add_argument("--as", dest="username", required=True, help="the safety officer deciding")
        parser.add_argument("--comment", default="", help="what you checked (or what must change); required")
        parser.add_argument("--request-changes", action="store_true", help="request changes instead of approving")

    def handle(
        self,
        *args: Any,
        system: str,
        revision: str,
        username: str,
        comment: str,
        request_changes: bool,
        **options: Any,
    ) -> None:
        number = revision.lower().removeprefix("r")
        if not number.isdigit():
            raise CommandError(f"revision: {revision!r} is not a revision number (e.g. 3 or r3)")
        found = CatalogRevision.objects.filter(system=system, number=int(number)).first()
        if found is None:
            raise CommandError(f"{system} r{number}: no such revision")
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"--as {username}: no such user")
        decision = RevisionReview.Decision.REQUEST_CHANGES if request_changes else RevisionReview.Decision.APPROVE
        try:
            result = revision_review(
                revision_id=found.pk, reviewer=user, decision=decision, comment=comment, via="cli --as"
            )
        except GovernanceRefused as exc:
            raise CommandError(f"{found}: refused: {exc.message}") from exc
        if decision == RevisionReview.Decision.REQUEST_CHANGES:
            self.stdout.write(f"{found}: changes requested by {username}; what is in effect stays as it was")
        elif result.in_effect:
            self.stdout.write(
                f"{found}: approved by {username} ({result.approvals} of {result.required}); "
                f"{result.applied} tool(s) now in effect for clinical profiles"
            )
        else:
            self.stdout.write(
                f"{found}: approved by {username} ({result.approvals} of {result.required}); "
                "it waits for another safety officer"
            )
