"""Benchmark: card-string bundles and .po export at 5,000 keys × 10 locales (in-process, server time).

Targets (issue 7): GET /api/v1/cards/{locale}.json answers in under 20 ms median, warm; a .po export of that
size takes under 2 s. Also reported: the cold bundle (first request after a change), the 304 answer, the
import that builds the data set, and a single translator save (which makes every bundle cold again).

    .venv/bin/python bench/cards_bundle.py [--keys 5000] [--requests 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LOCALES = ("de", "de-AT", "fr", "it", "tr", "pl", "ar", "es", "nl")  # + en, the source: 10
WORDS = {
    "de": "Karte",
    "de-AT": "Karte",
    "fr": "Carte",
    "it": "Scheda",
    "tr": "Kart",
    "pl": "Karta",
    "ar": "بطاقة",
    "es": "Tarjeta",
    "nl": "Kaart",
}


def ms(seconds: list[float]) -> str:
    p95 = sorted(seconds)[int(len(seconds) * 0.95)]
    return f"median {statistics.median(seconds) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms"


def build_files(n: int) -> list[tuple[str, bytes]]:
    from catalog.cards.domain.locales import plural_spec
    from catalog.cards.domain.pofiles import SourceEntry, TranslationEntry, write_locale, write_template

    modules = ("base", "status", "extras", "hitl")
    sources = []
    for i in range(n):
        card = f"card.c{i // 12}"
        if i % 12 == 0:
            sources.append(SourceEntry(f"{card}.title", modules[i % 4], f"Card {i}", slot="title", note=f"Title {i}."))
        elif i % 12 == 1:
            sources.append(SourceEntry(f"{card}.count", modules[i % 4], "{count} row", "{count} rows", slot="hint"))
        else:
            sources.append(
                SourceEntry(f"{card}.kv.f{i}", modules[i % 4], f"Field {i} of {{name}}", note="Key/value label.")
            )
    when = datetime(2026, 11, 1, tzinfo=UTC)
    files = [("cards.pot", write_template(sources, revision=when, created=when))]
    for code in LOCALES:
        count = plural_spec(code).count
        word = WORDS[code]
        translations = {}
        for j, s in enumerate(sources):
            if code == "de-AT" and j % 10:
                continue  # regional: overrides only, the rest inherited from de
            if s.source_plural:
                forms = [f"{{count}} {word} {k}" for k in range(count)]
            else:
                forms = [f"{word} {j} {{name}}" if "{name}" in s.source else f"{word} {j}"]
            translations[s.key] = TranslationEntry(s.key, forms, state="reviewed" if j % 3 == 0 else "translated")
        files.append((f"{code}.po", write_locale(code, sources, translations, revision=when, created=when)))
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="condor-cards-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from catalog.cards.selectors.exports import export_catalogs, export_locale
    from catalog.cards.services.imports import cards_import
    from catalog.cards.services.translations import locale_add, translation_save
    from catalog.core.audit import Actor
    from catalog.models import ApiToken, CardTranslation

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    actor = Actor(label="bench")
    for code in LOCALES:
        if code != "de":
            locale_add(actor=actor, code=code)
    files = build_files(args.keys)
    start = time.perf_counter()
    cards_import(files=files, actor=actor)
    import_s = time.perf_counter() - start
    rows = CardTranslation.objects.count()
    raw = ApiToken.generate()
    ApiToken.objects.create(name="bench", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=["cards"])
    api = Client(headers={"Authorization": f"Bearer {raw}"})

    results: dict[str, object] = {"keys": args.keys, "locales": 1 + len(LOCALES), "translations": rows}
    results["import_s"] = round(import_s, 2)
    cold, warm, not_modified, sizes = [], [], [], {}
    for code in ("de", "de-AT", "pl", "ar"):
        start = time.perf_counter()
        first = api.get(f"/api/v1/cards/{code}.json")
        cold.append(time.perf_counter() - start)
        assert first.status_code == 200, first.status_code
        sizes[code] = len(first.content)
    for _ in range(args.requests):
        for code in ("de", "de-AT", "pl", "ar"):  # interleaved, so machine noise hits every locale alike
            start = time.perf_counter()
            response = api.get(f"/api/v1/cards/{code}.json")
            warm.append(time.perf_counter() - start)
            assert response.status_code == 200
            start = time.perf_counter()
            response = api.get(f"/api/v1/cards/{code}.json", headers={"If-None-Match": response["ETag"]})
            not_modified.append(time.perf_counter() - start)
            assert response.status_code == 304
    results["bundle_warm_ms"] = round(statistics.median(warm) * 1000, 2)
    results["bundle_304_ms"] = round(statistics.median(not_modified) * 1000, 2)
    results["bundle_cold_ms"] = round(statistics.median(cold) * 1000, 1)
    results["bundle_bytes"] = sizes

    from catalog.cards.domain.pofiles import _static

    exports = []
    for _ in range(3):
        _static.cache_clear()  # as a fresh `manage.py cards_export` process: nothing memoised yet
        start = time.perf_counter()
        catalogs = export_catalogs(list(LOCALES))  # what cards_export writes: cards.pot and 9 .po
        exports.append(time.perf_counter() - start)
    assert len(catalogs) == 1 + len(LOCALES)
    one = []
    for _ in range(5):
        _static.cache_clear()
        start = time.perf_counter()
        export_locale("de")
        one.append(time.perf_counter() - start)
    results["po_export_all_s"] = round(statistics.median(exports), 2)
    results["po_export_one_locale_s"] = round(statistics.median(one), 3)

    user = get_user_model().objects.create_user("bench-translator")
    from django.contrib.auth.models import Group

    user.groups.set([Group.objects.get_or_create(name="translator")[0]])
    saves = []
    for i in range(10):
        start = time.perf_counter()
        translation_save(user=user, key="card.c1.title", locale="de", forms=[f"Karte {i}"])
        saves.append(time.perf_counter() - start)
    results["translator_save_ms"] = round(statistics.median(saves) * 1000, 1)

    print(f"card strings: {args.keys} keys × {1 + len(LOCALES)} locales ({rows} translations)")
    print(f"  import (.pot + 9 .po, one transaction): {import_s:.2f} s")
    print(f"  bundle warm:  {ms(warm)}   (target < 20 ms)")
    print(f"  bundle 304:   {ms(not_modified)}")
    print(f"  bundle cold:  median {statistics.median(cold) * 1000:.1f} ms (first request after a change)")
    print(f"  .po export, template + 9 locales: {statistics.median(exports):.2f} s (target < 2 s)")
    print(f"  .po export, one locale: {statistics.median(one) * 1000:.0f} ms")
    print(f"  translator save (checks, findings, audit): median {statistics.median(saves) * 1000:.1f} ms")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "cards.json").write_text(json.dumps(results, indent=1))
    ok = statistics.median(warm) < 0.020 and statistics.median(exports) < 2.0
    print("targets met" if ok else "TARGETS MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
