from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from catalog.cards.services.demo import cards_demo_load
from catalog.core import roles
from catalog.domain.manifest import ManifestError
from catalog.models import CatalogRevision
from catalog.services.demo import catalog_demo_load
from catalog.usage.services.demo import usage_demo_load

DEMO_PASSWORD = "condor-demo"  # noqa: S105 - printed demo credentials, local runs only

# username → (groups, is_staff, is_superuser)
DEMO_USERS: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "admin": ((roles.CATALOG_ADMIN,), True, True),
    "safety": ((roles.SAFETY_OFFICER,), False, False),
    "safety-two": ((roles.SAFETY_OFFICER,), False, False),
    "oncall": ((roles.ON_CALL,), False, False),
    "approver": ((roles.APPROVER, roles.approver_group("medication")), False, False),
    "billing-approver": ((roles.APPROVER, roles.approver_group("billing")), False, False),
    "translator": ((roles.TRANSLATOR,), False, False),
    "reviewer": ((roles.TRANSLATOR, roles.TRANSLATOR_REVIEWER), False, False),
    "catalog-admin": ((roles.CATALOG_ADMIN,), True, False),
}


class Command(BaseCommand):
    help = (
        "Create the demo users, import the demo catalogs signed off, plus one revision awaiting review, and a week of "
        "made-up runtime telemetry (idempotent)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="load nothing when the database already holds a catalog (`make run` a second time keeps every edit "
            "made since; `make demo-reset` starts over)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["if_empty"] and CatalogRevision.objects.exists():
            self.stdout.write(
                "The database already holds a catalog: the demo is not loaded again, so nothing made since is "
                "overwritten (make demo-reset starts from a fresh demo)."
            )
            return
        with transaction.atomic():
            users = {name: _demo_user(name, *spec) for name, spec in DEMO_USERS.items()}
        try:
            lines = catalog_demo_load(importer=users["catalog-admin"], officers=(users["safety"], users["safety-two"]))
        except ManifestError as exc:
            raise CommandError("demo manifest refused:\n  " + "\n  ".join(exc.problems)) from exc
        for line in lines:
            self.stdout.write(line)
        self.stdout.write(cards_demo_load().summary())
        self.stdout.write(usage_demo_load())
        self.stdout.write("")
        self.stdout.write(f"Demo logins (password {DEMO_PASSWORD!r} for each):")
        for username, (groups, _, is_superuser) in DEMO_USERS.items():
            extra = ", superuser" if is_superuser else ""
            self.stdout.write(f"  {username:<17} {', '.join(groups)}{extra}")


def _demo_user(username: str, groups: tuple[str, ...], is_staff: bool, is_superuser: bool) -> Any:
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_password(DEMO_PASSWORD)
    user.is_staff = is_staff
    user.is_superuser = is_superuser
    user.save()
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in groups])
    return user
