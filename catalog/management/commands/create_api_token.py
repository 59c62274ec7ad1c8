from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from catalog.models import ApiToken


class Command(BaseCommand):
    help = "Create a service bearer token. The token is printed once; only its hash is stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--scopes", required=True, help=f"comma-separated: {','.join(ApiToken.SCOPES)}")
        parser.add_argument("--expires-days", type=int, default=None)
        parser.add_argument(
            "--owner",
            help="username of the person answerable for the token (recorded as the importer of its catalog imports; "
            "a catalog-scoped token needs one once a clinical profile exists)",
        )

    def handle(
        self, *args: Any, name: str, scopes: str, expires_days: int | None, owner: str | None, **options: Any
    ) -> None:
        wanted = [s.strip() for s in scopes.split(",") if s.strip()]
        unknown = [s for s in wanted if s not in ApiToken.SCOPES]
        if unknown or not wanted:
            raise CommandError(
                f"--scopes: unknown scope(s) {', '.join(unknown) or '(none given)'}; "
                f"choose from {', '.join(ApiToken.SCOPES)}"
            )
        if ApiToken.objects.filter(name=name).exists():
            raise CommandError(f"a token named {name!r} already exists; revoke it or pick another name")
        if expires_days is not None and expires_days <= 0:
            raise CommandError("--expires-days: must be a positive number of days")
        owner_user = None
        if owner:
            owner_user = get_user_model().objects.filter(username=owner).first()
            if owner_user is None:
                raise CommandError(f"--owner {owner}: no such user")
        raw = ApiToken.generate()
        ApiToken.objects.create(
            owner=owner_user,
            name=name,
            prefix=raw[:10],
            token_hash=ApiToken.hash(raw),
            scopes=wanted,
            expires_at=timezone.now() + timedelta(days=expires_days) if expires_days else None,
        )
        self.stdout.write(raw)
        self.stderr.write(f"token {name!r} with scopes {', '.join(wanted)}: shown once, store it now")
