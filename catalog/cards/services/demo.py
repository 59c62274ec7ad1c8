"""The demo card strings (catalog/demo/cards/): a few hundred keys across the four seam modules, a complete
German translation except a handful of deliberate gaps and errors, Austrian German overrides and a partial
Polish. Loaded through the real import, so re-loading changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from django.db import transaction

from catalog.cards.services.imports import ImportResult, cards_import
from catalog.cards.services.translations import locale_add
from catalog.core.audit import Actor
from catalog.models import CardLocale

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo" / "cards"
FILES = ("cards.pot", "de.po", "de_AT.po", "pl.po")


@transaction.atomic
def cards_demo_load() -> ImportResult:
    actor = Actor(label="demo")
    wanted = json.loads((DEMO_DIR / "locales.json").read_text(encoding="utf-8"))["locales"]
    # de first: de-AT falls back to it. en and de come with the migrations; add them if a test flushed them.
    cards_import(files=[], actor=actor)
    for spec in wanted:
        if not CardLocale.objects.filter(code=spec["code"]).exists():
            locale_add(
                actor=actor, code=spec["code"], fallback=spec.get("fallback"), required=spec.get("required", False)
            )
    return cards_import(files=[(name, (DEMO_DIR / name).read_bytes()) for name in FILES], actor=actor)
