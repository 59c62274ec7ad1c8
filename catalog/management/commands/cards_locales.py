from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.cards.domain.locales import plural_spec
from catalog.cards.selectors.locales import completion, locales
from catalog.cards.services.translations import CardsRefused, locale_add
from catalog.core.audit import Actor


class Command(BaseCommand):
    help = "List the card locales with their completion, or add one (--add de-AT [--fallback de] [--required])."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--add", metavar="LOCALE")
        parser.add_argument("--fallback", metavar="LOCALE", help="default: its language if known, else English")
        parser.add_argument("--required", action="store_true", help="a missing text is an error, not a warning")

    def handle(self, *args: Any, add: str | None, fallback: str | None, required: bool, **options: Any) -> None:
        if add:
            try:
                loc = locale_add(actor=Actor(label="cli"), code=add, fallback=fallback, required=required)
            except CardsRefused as exc:
                raise CommandError(exc.message) from exc
            self.stdout.write(f"added {loc.code} (falls back to {loc.fallback.code if loc.fallback else '-'})")
        locs = locales()
        done = {c.locale.code: c for c in completion(locs)}
        for loc in locs:
            c = done.get(loc.code)
            forms = plural_spec(loc.code).count
            state = f"{c.translated}/{c.total} translated, {c.reviewed} reviewed, {c.fuzzy} fuzzy" if c else "source"
            fb = f" → {loc.fallback.code}" if loc.fallback else ""
            req = " required" if loc.required else ""
            self.stdout.write(f"{loc.code:<8}{fb:<8}{req:<10} {forms} plural forms  {state}")
