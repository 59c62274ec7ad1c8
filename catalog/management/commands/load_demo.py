from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from catalog.cards.services.demo import cards_demo_load
from catalog.core import roles
from catalog.domain.manifest import ManifestError
from catalog.services.imports import catalog_import

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
DEMO_PASSWORD = "condor-demo"  # noqa: S105 - printed demo credentials, local runs only

# username → (groups, is_staff, is_superuser)
DEMO_USERS: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "admin": ((roles.CATALOG_ADMIN,), True, True),
    "safety": ((roles.SAFETY_OFFICER,), False, False),
    "oncall": ((roles.ON_CALL,), False, False),
    "approver": ((roles.APPROVER, roles.approver_group("medication")), False, False),
    "billing-approver": ((roles.APPROVER, roles.approver_group("billing")), False, False),
    "translator": ((roles.TRANSLATOR,), False, False),
    "reviewer": ((roles.TRANSLATOR, roles.TRANSLATOR_REVIEWER), False, False),
    "catalog-admin": ((roles.CATALOG_ADMIN,), True, False),
}


class Command(BaseCommand):
    help = "Import the demo catalogs and create the demo users (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        for name in ("condor.json", "tucan.json"):
            try:
                result = catalog_import(raw=(DEMO_DIR / name).read_bytes(), via=f"demo {name}")
            except ManifestError as exc:
                raise CommandError(f"demo manifest {name} refused:\n  " + "\n  ".join(exc.problems)) from exc
            self.stdout.write(result.summary())
        self.stdout.write(cards_demo_load().summary())
        with transaction.atomic():
            user_model = get_user_model()
            for username, (groups, is_staff, is_superuser) in DEMO_USERS.items():
                user, created = user_model.objects.get_or_create(username=username)
                if created:
                    user.set_password(DEMO_PASSWORD)
                user.is_staff = is_staff
                user.is_superuser = is_superuser
                user.save()
                user.groups.set([Group.objects.get_or_create(name=name)[0] for name in groups])
        self.stdout.write("")
        self.stdout.write(f"Demo logins (password {DEMO_PASSWORD!r} for each):")
        for username, (groups, _, is_superuser) in DEMO_USERS.items():
            extra = ", superuser" if is_superuser else ""
            self.stdout.write(f"  {username:<17} {', '.join(groups)}{extra}")
