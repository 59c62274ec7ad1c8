from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.cards.services.imports import CardsImportError, cards_import
from catalog.core.audit import Actor


class Command(BaseCommand):
    help = (
        "Import card strings in one transaction: cards.pot (keys, English, notes), <lang>.po (translations) and "
        "frontend JSON bundles. Nothing changes if any file has a problem; every problem is listed with its place."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--locale", help="the locale of a JSON bundle that does not say (e.g. de-AT)")
        parser.add_argument("--create-locales", action="store_true", help="add locales the files name but we lack")
        parser.add_argument("--as", dest="username", help="record this user as the importer")

    def handle(
        self,
        *args: Any,
        files: list[Path],
        locale: str | None,
        create_locales: bool,
        username: str | None,
        **options: Any,
    ) -> None:
        loaded = []
        for path in files:
            try:
                loaded.append((str(path), path.read_bytes()))
            except OSError as exc:
                raise CommandError(f"{path}: {exc.strerror}") from exc
        actor = Actor(label="cli")
        if username:
            user = get_user_model().objects.filter(username=username).first()
            if user is None:
                raise CommandError(f"--as {username}: no such user")
            actor = Actor.for_user(user)
        try:
            result = cards_import(files=loaded, actor=actor, locale=locale, create_locales=create_locales)
        except CardsImportError as exc:
            lines = "\n".join(f"  {problem}" for problem in exc.problems)
            raise CommandError(
                f"card strings refused, {len(exc.problems)} problem(s); nothing was changed:\n{lines}"
            ) from exc
        self.stdout.write(result.summary())
