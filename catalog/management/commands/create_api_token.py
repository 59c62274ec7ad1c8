from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from catalog.core.audit import Actor
from catalog.core.tokens import DEFAULT_EXPIRY_DAYS, TokenRefused, api_token_issue, token_max_days
from catalog.models import ApiToken


class Command(BaseCommand):
    help = (
        "Create a service bearer token. The token is printed once; only its hash is stored. Like a token issued in "
        "the console it expires (default 90 days, at most CONDOR_TOKEN_MAX_DAYS) and its creation is audited."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--scopes", required=True, help=f"comma-separated: {','.join(ApiToken.SCOPES)}")
        parser.add_argument(
            "--expires-days", type=int, default=DEFAULT_EXPIRY_DAYS, help=f"default {DEFAULT_EXPIRY_DAYS}"
        )
        parser.add_argument(
            "--owner",
            help="username of the person answerable for the token (recorded as the importer of its catalog imports; "
            "a catalog:write token needs one once a clinical profile exists)",
        )

    def handle(self, *args: Any, name: str, scopes: str, expires_days: int, owner: str | None, **options: Any) -> None:
        wanted = [s.strip() for s in scopes.split(",") if s.strip()]
        if not 0 < expires_days <= token_max_days():
            raise CommandError(f"--expires-days: between 1 and {token_max_days()} (CONDOR_TOKEN_MAX_DAYS)")
        owner_user = None
        if owner:
            owner_user = get_user_model().objects.filter(username=owner).first()
            if owner_user is None:
                raise CommandError(f"--owner {owner}: no such user")
        try:
            issued = api_token_issue(
                name=name,
                scopes=wanted,
                expires_at=timezone.now() + timedelta(days=expires_days),
                owner=owner_user,
                actor=Actor(label="cli"),
            )
        except TokenRefused as exc:
            flags = {"name": "NAME", "scopes": "--scopes", "expires_on": "--expires-days"}
            raise CommandError(
                "; ".join(f"{flags.get(field or '', field or 'token')}: {text}" for field, text in exc.problems.items())
            ) from exc
        self.stdout.write(issued.raw)
        self.stderr.write(
            f"token {name!r} with scopes {', '.join(issued.token.scopes)}, expires "
            f"{timezone.localdate(issued.token.expires_at):%Y-%m-%d}: shown once, store it now"
        )
