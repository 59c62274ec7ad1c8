"""Babel .po import and export, frontend JSON bundles: the lossless round trip, and imports that change
nothing and report every problem with its place."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.cards.selectors.exports import export_locale, export_template
from catalog.cards.services.imports import CardsImportError
from catalog.cards.services.translations import locale_add, translation_save
from catalog.core.audit import Actor
from catalog.models import AuditEvent, CardFinding, CardString, CardTranslation

from .conftest import GERMAN, TEMPLATE, catalog, entry

pytestmark = pytest.mark.django_db


def stored_state() -> dict[str, Any]:
    strings = {
        s.key: (s.module, s.source, s.source_plural, s.note, s.slot, s.max_chars, s.value_set, s.code, s.placeholders)
        for s in CardString.objects.all()
    }
    translations = {
        (t.string.key, t.locale.code): (t.forms, t.state, t.same_as_source, t.comment, t.translated_from, t.ships)
        for t in CardTranslation.objects.select_related("string", "locale")
    }
    findings = sorted(
        (f.string.key, f.locale.code if f.locale else None, f.check_name, f.message)
        for f in CardFinding.objects.select_related("string", "locale")
    )
    return {"strings": strings, "translations": translations, "findings": findings}


def mixed_states(translator: Any, load: Any) -> None:
    """Every kind of translation state a .po must carry: fuzzy with its old English, reviewed, untranslated
    with a comment, same-as-source, plural forms, and a broken one."""
    load(
        ("cards.pot", catalog(*TEMPLATE)),
        (
            "de.po",
            catalog(
                *GERMAN[:4],
                entry("status.medicationrequest.on-hold", "On Hold", forms=[""], comment="Klinik fragt noch"),
                entry(
                    "hitl.warning.highTier", "<strong>High-risk</strong> change: {tool}", forms=["Hochrisiko: {tool}"]
                ),
                language="de",
            ),
        ),
    )
    changed = entry("card.medication.warning.interaction", "Interaction with {drug}", slot="message")
    load(("cards.pot", catalog(*TEMPLATE[:3], changed, *TEMPLATE[4:])))
    translation_save(user=translator, key="status.medicationrequest.active", locale="de", forms=["Aktiv"], comment="ok")


def test_export_then_import_changes_nothing_and_exports_the_same_bytes(translator: Any, load: Any) -> None:
    mixed_states(translator, load)
    before = stored_state()
    pot, po = export_template(), export_locale("de")
    events = AuditEvent.objects.count()
    result = load(("cards.pot", pot), ("de.po", po))
    assert result.unchanged and AuditEvent.objects.count() == events
    assert stored_state() == before
    assert export_template() == pot and export_locale("de") == po


def test_export_then_import_into_an_empty_database_restores_everything(translator: Any, load: Any) -> None:
    mixed_states(translator, load)
    before = stored_state()
    pot, po = export_template(), export_locale("de")
    CardString.objects.all().delete()
    load(("cards.pot", pot), ("de.po", po))
    assert stored_state() == before
    fuzzy = CardTranslation.objects.get(string__key="card.medication.warning.interaction")
    assert fuzzy.state == "fuzzy" and fuzzy.translated_from == ["Possible interaction with {drug}"]
    assert export_locale("de") == po


def test_the_po_keeps_comments_fuzzy_flags_previous_english_and_plural_forms(translator: Any, load: Any) -> None:
    mixed_states(translator, load)
    po = export_locale("de").decode()
    assert '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"' in po
    assert '#, fuzzy, python-brace-format\n#| msgid "Possible interaction with {drug}"\n' in po
    assert "# Klinik fragt noch\n" in po and "#, reviewed" in po and "same-as-source" in po
    assert 'msgstr[0] "{count} aktives Medikament"\nmsgstr[1] "{count} aktive Medikamente"' in po
    assert "#. Title of the medication card.\n#. condor:slot=title\n#: card-i18n-base.ts" in po


@pytest.mark.parametrize(
    ("code", "forms"),
    [
        ("pl", ["{count} aktywny lek", "{count} aktywne leki", "{count} aktywnych leków"]),
        ("ar", ["لا أدوية", "دواء واحد", "دواءان", "{count} أدوية", "{count} دواءً", "{count} دواء"]),
    ],
)
def test_plural_forms_round_trip_for_polish_and_arabic(code: str, forms: list[str], load: Any) -> None:
    load(("cards.pot", catalog(*TEMPLATE)))
    locale_add(actor=Actor(label="test"), code=code)
    plural = {"pl": "nplurals=3; plural=(n==1 ? 0 : 1)", "ar": "nplurals=6; plural=(n==0 ? 0 : 1)"}[code]
    po = catalog(
        entry("card.medication.count", "{count} active medication", "{count} active medications", forms=forms),
        language=code,
        plural_forms=plural,
    )
    load((f"{code}.po", po))
    t = CardTranslation.objects.get(string__key="card.medication.count", locale__code=code)
    assert t.forms == forms and t.ships
    exported = export_locale(code).decode()
    assert f"msgstr[{len(forms) - 1}]" in exported and f"msgstr[{len(forms)}]" not in exported
    assert load((f"{code}.po", exported.encode())).unchanged


def test_a_po_with_problems_changes_nothing_and_names_every_place(small: None, load: Any) -> None:
    before = stored_state()
    po = catalog(
        entry("card.medication.title", "Medications", forms=["Arzneimittel"]),  # line 5: fine, but not applied
        entry("card.unknown.title", "Nope", forms=["Nein"]),
        entry("clinical.drug.name", "Metformin", forms=["Metformin"]),
        entry(
            "card.medication.count", "{count} active medication", "{count} active medications", forms=["a", "b", "c"]
        ),
        entry("card.medication.kv.status", "Status", "Statuses", forms=["Status", "Status"]),
        language="de",
    )
    with pytest.raises(CardsImportError) as refused:
        load(("de.po", po))
    problems = refused.value.problems
    assert len(problems) == 4, problems
    lines = po.decode().splitlines()
    nope, metformin = lines.index('msgid "Nope"') + 1, lines.index('msgid "Metformin"') + 1
    assert problems[0] == (
        f"de.po:{nope}: unknown key card.unknown.title: not in the card strings (import the template first)"
    )
    assert problems[1].startswith(f"de.po:{metformin}: refused: key clinical.drug.name is in a never-localize")
    assert "msgstr[2]: this locale has 2 plural forms" in problems[2]
    assert "card.medication.kv.status is not plural in the template" in problems[3]
    assert stored_state() == before


def test_the_never_localize_guard_refuses_templates_and_bundles(db: Any, load: Any) -> None:
    pot = catalog(
        entry("card.medication.title", "Medications", slot="title"),
        entry("tool.prescribeMedication.ragDescription", "USE WHEN: the clinician asks to prescribe"),
        entry("patient.name", "Erika Mustermann"),
    )
    with pytest.raises(CardsImportError) as refused:
        load(("cards.pot", pot))
    assert [p.split(": refused: ")[1].split(" (")[0] for p in refused.value.problems] == [
        "key tool.prescribeMedication.ragDescription is in a never-localize namespace",
        "key patient.name is in a never-localize namespace",
    ]
    assert not CardString.objects.exists()
    load(("cards.pot", catalog(*TEMPLATE)))
    with pytest.raises(CardsImportError) as bundle:
        load(("de.json", json.dumps({"rag": {"keywords": "verordnen"}}).encode()))
    assert bundle.value.problems[0].startswith('de.json: $["rag"]["keywords"]: refused: key rag.keywords')


def test_template_problems_are_reported_with_their_lines(db: Any, load: Any) -> None:
    pot = catalog(
        entry("status.medicationrequest.paused", "Paused", module="status", fhir="medicationrequest-status#paused"),
        entry("status.observation.final", "Final", module="status", fhir="observation-status#final"),
        entry("card.x.title", "X", module="nowhere"),
        entry("card.y.title", "Y", slot="headline"),
        entry("card.y.title", "Y again"),
    )
    with pytest.raises(CardsImportError) as refused:
        load(("cards.pot", pot))
    text = "\n".join(refused.value.problems)
    assert "code 'paused' is not in medicationrequest-status" in text
    assert "card.x.title: say its seam module with one location comment" in text
    assert "slot 'headline' is not one of" in text
    assert "card.y.title is declared twice" in text or "key card.y.title appears twice" in text
    assert all(p.startswith("cards.pot:") for p in refused.value.problems)
    assert not CardString.objects.exists()


def test_a_translation_made_from_older_english_arrives_fuzzy(small: None, load: Any) -> None:
    load(("de.po", catalog(entry("card.medication.title", "Meds", msgid="Meds", forms=["Arzneien"]), language="de")))
    t = CardTranslation.objects.get(string__key="card.medication.title", locale__code="de")
    assert t.state == "fuzzy" and t.forms == ["Arzneien"] and t.translated_from == ["Meds"] and not t.ships


def test_an_empty_msgstr_never_wipes_a_translation(small: None, load: Any) -> None:
    assert load(("de.po", catalog(entry("card.medication.title", "Medications"), language="de"))).unchanged
    assert CardTranslation.objects.get(string__key="card.medication.title", locale__code="de").forms == ["Medikation"]


def test_frontend_json_bundles_import_flat_nested_and_our_own(small: None, load: Any) -> None:
    locale_add(actor=Actor(label="test"), code="fr")
    nested = {"card": {"medication": {"title": "Médicaments", "count": ["{count} médicament", "{count} médicaments"]}}}
    result = load(("fr.json", json.dumps(nested).encode()))
    assert result.translations == {"fr": {"added": 2, "changed": 0}}
    count = CardTranslation.objects.get(string__key="card.medication.count", locale__code="fr")
    assert count.forms == ["{count} médicament", "{count} médicaments", ""]  # French has 3 forms: padded, flagged
    assert set(
        CardFinding.objects.filter(string=count.string, locale__code="fr").values_list("check_name", flat=True)
    ) == {"plural-forms"}
    ours = {"format": "condor-cards/v1", "locale": "fr", "strings": {"card.medication.title": "Médicaments"}}
    assert load(("bundle.json", json.dumps(ours).encode())).unchanged


def test_an_english_bundle_updates_the_source_and_turns_translations_fuzzy(small: None, load: Any) -> None:
    result = load(("en.json", json.dumps({"card.medication.title": "Active medications"}).encode()))
    assert result.source_changed == ["card.medication.title"]
    assert CardString.objects.get(key="card.medication.title").source == "Active medications"
    assert CardTranslation.objects.get(string__key="card.medication.title", locale__code="de").state == "fuzzy"
    with pytest.raises(CardsImportError, match="1 problem"):
        load(("en.json", json.dumps({"card.brand.new": "New"}).encode()))


def test_a_regional_bundle_does_not_copy_its_parents_texts(small: None, load: Any) -> None:
    locale_add(actor=Actor(label="test"), code="de-AT")
    bundle = {"card.medication.title": "Medikation", "status.medicationrequest.on-hold": "Ruhend"}
    result = load(("de-AT.json", json.dumps(bundle).encode()))
    assert result.translations == {"de-AT": {"added": 1, "changed": 0}}


def test_malformed_files_are_refused_with_their_place(small: None, load: Any) -> None:
    with pytest.raises(CardsImportError) as refused:
        load(("de.json", b'{"card.medication.title": "Medikation",\n  oops}'), ("notes.txt", b"hello"))
    assert refused.value.problems == [
        "de.json:2:3: not JSON (Expecting property name enclosed in double quotes)",
        "notes.txt: import a .pot (the template), a .po (one locale) or a .json bundle",
    ]
    with pytest.raises(CardsImportError) as unknown:
        load(("xx.po", catalog(entry("card.medication.title", "Medications", forms=["?"]), language="fr")))
    assert unknown.value.problems == ["xx.po: no locale fr; add it (manage.py cards_locales --add fr)"]


def test_commands_export_and_import_the_catalogs(small: None, tmp_path: Path) -> None:
    out = io.StringIO()
    call_command("cards_export", "--out", str(tmp_path), "--format", "po", "--format", "json", stdout=out)
    assert (tmp_path / "cards.pot").exists() and (tmp_path / "de" / "LC_MESSAGES" / "cards.po").exists()
    assert json.loads((tmp_path / "de.json").read_text())["strings"]["card.medication.title"] == "Medikation"
    out = io.StringIO()
    call_command(
        "cards_import", str(tmp_path / "cards.pot"), str(tmp_path / "de" / "LC_MESSAGES" / "cards.po"), stdout=out
    )
    assert "nothing changed" in out.getvalue()
    bad = tmp_path / "bad.po"
    bad.write_bytes(catalog(entry("card.gone.title", "Gone", forms=["Weg"]), language="de"))
    with pytest.raises(CommandError, match=r"1 problem\(s\); nothing was changed:\n  .*bad.po:\d+: unknown key"):
        call_command("cards_import", str(bad))
