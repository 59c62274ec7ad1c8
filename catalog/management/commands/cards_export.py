from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.cards.domain.locales import SOURCE_LOCALE, babel_locale, normalize_locale
from catalog.cards.selectors.exports import bundle, export_catalogs
from catalog.cards.selectors.locales import locales


class Command(BaseCommand):
    help = (
        "Export the card strings: cards.pot (the template) and <lang>/LC_MESSAGES/cards.po per locale, "
        "and with --format json the bundles the web frontend loads (<locale>.json)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, default=Path(settings.BASE_DIR) / "locale" / "cards")
        parser.add_argument("--locale", action="append", default=[], help="only these locales (repeatable)")
        parser.add_argument("--format", action="append", choices=["po", "json"], default=[], help="po (default), json")

    def handle(self, *args: Any, out: Path, locale: list[str], format: list[str], **options: Any) -> None:
        formats = format or ["po"]
        known = [loc.code for loc in locales()]
        try:
            wanted = [normalize_locale(code) for code in locale] or known
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        unknown = [code for code in wanted if code not in known]
        if unknown:
            raise CommandError(f"--locale: no such locale(s) {', '.join(unknown)}; known: {', '.join(known)}")
        out.mkdir(parents=True, exist_ok=True)
        written = []
        if "po" in formats:
            for name, body in export_catalogs([c for c in wanted if c != SOURCE_LOCALE]).items():
                target = out / name if name == "cards.pot" else out / babel_locale(name) / "LC_MESSAGES" / "cards.po"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(body)
                written.append(target)
        if "json" in formats:
            for code in wanted:
                found = bundle(code)
                if found is not None:
                    (out / f"{code}.json").write_bytes(found.body)
                    written.append(out / f"{code}.json")
        for path in written:
            self.stdout.write(str(path))
