"""The pure rules of card strings: each check both ways, plural forms through Babel, locales, bundles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from catalog.cards.bundles import bundle_document, parse_bundle, resolve
from catalog.cards.domain import (
    Check,
    LocaleSpec,
    Severity,
    StringSpec,
    check_key,
    check_translation,
    fallback_chain,
    key_problem,
    markup,
    never_localize_reason,
    normalize_locale,
    placeholders,
    plural_spec,
    ships,
)

DE = LocaleSpec("de", required=True)
FR = LocaleSpec("fr")
DE_AT = LocaleSpec("de-AT", regional=True)
EN_GB = LocaleSpec("en-GB")
TITLE = StringSpec("card.medication.title", "Medications", slot="title")
WARNING = StringSpec("card.medication.warning.interaction", "Possible interaction with {drug}", slot="message")
COUNT = StringSpec("card.medication.count", "{count} active medication", "{count} active medications", slot="hint")
MARKED = StringSpec("hitl.warning.highTier", "<strong>High-risk</strong> change: {tool}", slot="message")


def checks(found: list) -> set[Check]:
    return {f.check for f in found}


def test_pure_card_modules_have_no_django_imports() -> None:
    root = Path(__file__).resolve().parents[2] / "catalog" / "cards"
    for name in ("domain.py", "bundles.py", "valuesets.py", "preview.py", "pofiles.py"):
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
        assert not [m for m in imported if m == "django" or m.startswith("django.")], name


# --- missing ---------------------------------------------------------------------------------------


def test_missing_translation_is_an_error_in_a_required_locale() -> None:
    [finding] = check_translation(TITLE, DE, None)
    assert finding.check == Check.MISSING and finding.severity == Severity.ERROR
    assert checks(check_translation(TITLE, DE, ["", ""])) == {Check.MISSING}


def test_missing_translation_is_a_warning_in_an_optional_locale_and_nothing_in_a_regional_one() -> None:
    [finding] = check_translation(TITLE, FR, None)
    assert finding.severity == Severity.WARNING
    assert check_translation(TITLE, DE_AT, None) == []  # inherited from de


def test_a_present_translation_is_not_missing() -> None:
    assert check_translation(TITLE, DE, ["Medikation"]) == []


# --- placeholders ----------------------------------------------------------------------------------


def test_placeholder_missing_extra_and_renamed_are_found() -> None:
    [missing] = check_translation(WARNING, DE, ["Mögliche Wechselwirkung"])
    assert missing.check == Check.PLACEHOLDER and missing.details["missing"] == ["drug"]
    [extra] = check_translation(WARNING, DE, ["Wechselwirkung mit {drug} am {date}"])
    assert extra.details["extra"] == ["date"] and extra.details["missing"] == []
    [renamed] = check_translation(WARNING, DE, ["Wechselwirkung mit {arzneimittel}"])
    assert renamed.details["renamed"] == [["drug", "arzneimittel"]]
    assert "{drug} renamed to {arzneimittel}" in renamed.message


def test_placeholders_in_any_order_pass() -> None:
    spec = StringSpec("hitl.decidedBy", "Approved by {name} at {time}", slot="hint")
    assert check_translation(spec, DE, ["Um {time} von {name} freigegeben"]) == []
    assert placeholders("Approved by {name} at {time}", "{time}") == ["name", "time"]


def test_a_plural_form_for_exactly_one_number_may_leave_out_count() -> None:
    # German form 1 is only n = 1: "Ein aktives Medikament" is right; form 2 must keep {count}.
    assert check_translation(COUNT, DE, ["Ein aktives Medikament", "{count} aktive Medikamente"]) == []
    [finding] = check_translation(COUNT, DE, ["Ein aktives Medikament", "Mehrere aktive Medikamente"])
    assert finding.check == Check.PLACEHOLDER and finding.details["missing"] == ["count"]
    # French form 1 is n = 0 and n = 1: it must say which.
    [fr] = check_translation(COUNT, FR, ["Un médicament actif", "{count} médicaments actifs", "{count} de médicaments"])
    assert fr.check == Check.PLACEHOLDER


# --- plural forms ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("locale", "count"), [("de", 2), ("de-AT", 2), ("pl", 3), ("ar", 6), ("fr", 3), ("tr", 2)])
def test_babel_gives_each_locale_its_number_of_plural_forms(locale: str, count: int) -> None:
    assert plural_spec(locale).count == count


def test_plural_form_index_follows_the_cldr_rules() -> None:
    de, pl, ar = plural_spec("de"), plural_spec("pl"), plural_spec("ar")
    assert [de.index(n) for n in (0, 1, 2, 5)] == [1, 0, 1, 1]
    assert [pl.index(n) for n in (1, 2, 4, 5, 12, 22, 25)] == [0, 1, 1, 2, 2, 1, 2]
    assert [ar.index(n) for n in (0, 1, 2, 3, 11, 100)] == [0, 1, 2, 3, 4, 5]
    assert pl.label(0) == "n = 1" and pl.label(1).startswith("n = 2, 3, 4, 22")


def test_wrong_number_of_plural_forms_is_found_for_de_pl_and_ar() -> None:
    assert check_translation(COUNT, DE, ["{count} Medikament", "{count} Medikamente"]) == []
    [de] = check_translation(COUNT, DE, ["{count} Medikament"])
    assert de.check == Check.PLURAL_FORMS and de.details == {
        "expected": 2,
        "got": 1,
        "empty": [],
        "labels": ["n = 1", "n = 0, 2, 3, 4, 5, …"],
    }
    pl_ok = ["{count} aktywny lek", "{count} aktywne leki", "{count} aktywnych leków"]
    assert check_translation(COUNT, LocaleSpec("pl"), pl_ok) == []
    [pl] = check_translation(COUNT, LocaleSpec("pl"), pl_ok[:2])
    assert pl.details["expected"] == 3 and pl.details["got"] == 2
    ar_ok = ["لا أدوية", "دواء واحد", "دواءان", "{count} أدوية", "{count} دواءً", "{count} دواء"]
    assert check_translation(COUNT, LocaleSpec("ar"), ar_ok) == []
    [ar] = check_translation(COUNT, LocaleSpec("ar"), ["{count} دواء", "{count} أدوية"])
    assert ar.check == Check.PLURAL_FORMS and ar.details["expected"] == 6


def test_an_empty_plural_form_is_a_plural_forms_finding() -> None:
    [finding] = check_translation(COUNT, DE, ["{count} Medikament", ""])
    assert finding.check == Check.PLURAL_FORMS and finding.details["empty"] == [1]


def test_a_non_plural_string_takes_one_form() -> None:
    [finding] = check_translation(TITLE, DE, ["Medikation", "Medikationen"])
    assert finding.check == Check.PLURAL_FORMS


# --- markup ----------------------------------------------------------------------------------------


def test_markup_that_differs_from_the_english_is_found() -> None:
    [lost] = check_translation(MARKED, DE, ["Hochrisiko-Änderung: {tool}"])
    assert lost.check == Check.MARKUP and lost.details["missing"] == ["</strong>", "<strong>"]
    [swapped] = check_translation(MARKED, DE, ["<em>Hochrisiko</em>-Änderung: {tool}"])
    assert swapped.details["extra"] == ["</em>", "<em>"]


def test_the_same_markup_passes_whatever_its_spelling() -> None:
    assert check_translation(MARKED, DE, ["<STRONG >Hochrisiko</strong>-Änderung: {tool}"]) == []
    assert markup("a<br/>b &amp; c") == markup("x <br/> y &amp;")


# --- same as source --------------------------------------------------------------------------------


def test_a_translation_identical_to_english_is_flagged_unless_marked() -> None:
    spec = StringSpec("card.lab.kv.unit", "Unit")
    [finding] = check_translation(spec, DE, ["Unit"])
    assert finding.check == Check.SAME_AS_SOURCE and finding.severity == Severity.WARNING
    assert check_translation(spec, DE, ["Unit"], same_as_source=True) == []
    assert check_translation(spec, DE, ["Einheit"]) == []


def test_same_as_source_does_not_apply_to_english_variants_or_texts_without_words() -> None:
    assert check_translation(StringSpec("card.x.title", "Colour"), EN_GB, ["Colour"]) == []
    assert check_translation(StringSpec("common.moreItems", "+{count}"), DE, ["+{count}"]) == []


# --- never localize --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["clinical.drug.name", "patient.name", "icd.E11", "rag.keywords", "tool.prescribeMedication.ragDescription"],
)
def test_keys_in_never_localize_namespaces_are_refused(key: str) -> None:
    assert never_localize_reason(key)
    assert "never-localize" in (key_problem(key) or "")
    [finding] = check_key(StringSpec(key, "x"))
    assert finding.check == Check.NEVER_LOCALIZE and finding.severity == Severity.ERROR


@pytest.mark.parametrize(
    "key", ["card.patient.kv.name", "card.patient.kv.birthDate", "status.condition.clinical.active"]
)
def test_card_chrome_about_clinical_things_is_localizable(key: str) -> None:
    assert never_localize_reason(key) is None and key_problem(key) is None
    assert check_key(StringSpec(key, "Name")) == []


def test_malformed_keys_are_refused() -> None:
    assert key_problem("Card Title") and key_problem("card") and key_problem("")


# --- too long --------------------------------------------------------------------------------------


def test_text_longer_than_its_slot_holds_is_found() -> None:
    [finding] = check_translation(TITLE, DE, ["Alle aktuell verordneten Arzneimittel des Patienten"])
    assert finding.check == Check.TOO_LONG and finding.details["max"] == 40
    assert check_translation(TITLE, DE, ["Medikation"]) == []


def test_length_is_measured_as_rendered_and_a_string_may_set_its_own_maximum() -> None:
    spec = StringSpec("card.x.title", "{name}", slot="title", max_chars=10)
    [finding] = check_translation(spec, DE, ["{name}"], same_as_source=True)  # "Erika Mustermann": 16 > 10
    assert finding.check == Check.TOO_LONG and finding.details == {"length": 16, "max": 10, "slot": "title"}
    assert check_key(StringSpec("card.x.title", "A title far too long for the title slot of a card"))[0].check == (
        Check.TOO_LONG
    )


# --- shipping, locales, bundles --------------------------------------------------------------------


def test_only_translated_texts_without_errors_ship() -> None:
    warning = check_translation(StringSpec("card.lab.kv.unit", "Unit"), DE, ["Unit"])
    error = check_translation(WARNING, DE, ["Wechselwirkung"])
    assert ships("translated", warning) and ships("reviewed", [])
    assert not ships("translated", error) and not ships("fuzzy", []) and not ships("untranslated", [])


def test_locale_codes_are_normalized_and_unknown_ones_refused() -> None:
    assert normalize_locale("de_at") == "de-AT" and normalize_locale("DE") == "de" and normalize_locale("pl") == "pl"
    for bad in ("xx", "deutsch!", ""):
        with pytest.raises(ValueError):
            normalize_locale(bad)


def test_regional_locales_fall_back_to_their_language_then_english() -> None:
    known = {"en": None, "de": None, "de-AT": "de", "de-CH": None, "fr": None}
    assert fallback_chain("de-AT", known) == ["de-AT", "de", "en"]
    assert fallback_chain("de-CH", known) == ["de-CH", "de", "en"]  # no fallback configured: its language
    assert fallback_chain("fr", known) == ["fr", "en"]
    assert fallback_chain("en", known) == ["en"]
    assert fallback_chain("a-B", {"a-B": "c", "c": "a-B", "en": None}) == ["a-B", "c", "en"]  # a cycle ends


def test_resolve_takes_the_first_locale_in_the_chain_that_has_the_key() -> None:
    texts = {"en": {"a": ["A"], "b": ["B"], "c": ["C"]}, "de": {"a": ["A-de"], "b": ["B-de"]}, "de-AT": {"a": ["A-at"]}}
    assert resolve(["de-AT", "de", "en"], ["a", "b", "c"], texts) == {
        "a": (["A-at"], "de-AT"),
        "b": (["B-de"], "de"),
        "c": (["C"], "en"),
    }


def test_a_bundle_gives_plural_strings_as_lists_padded_for_the_locale() -> None:
    resolved = {"x.count": (["{count} item", "{count} items"], "en"), "x.title": (["Title"], "en")}
    document = bundle_document("pl", ["pl", "en"], {"x.count": True, "x.title": False}, resolved)
    assert document["strings"] == {"x.count": ["{count} item", "{count} items", "{count} items"], "x.title": "Title"}
    assert document["plural"]["forms"] == 3 and document["fallbacks"] == ["en"]


def test_frontend_bundles_parse_flat_nested_and_our_own_format_with_json_paths() -> None:
    _, flat, problems = parse_bundle({"card.a.title": "A", "card.a.count": ["1", "2"]}, "f.json")
    assert flat == {"card.a.title": (["A"], '$["card.a.title"]'), "card.a.count": (["1", "2"], '$["card.a.count"]')}
    _, nested, _ = parse_bundle({"card": {"a": {"title": "A"}}}, "n.json")
    assert nested == {"card.a.title": (["A"], '$["card"]["a"]["title"]')}
    locale, ours, _ = parse_bundle({"format": "condor-cards/v1", "locale": "de", "strings": {"card.a.title": "A"}}, "o")
    assert locale == "de" and list(ours) == ["card.a.title"]
    _, _, problems = parse_bundle({"strings": {"card.a.title": 3, "card.b.title": []}}, "bad.json")
    assert problems == [
        'bad.json: $.strings["card.a.title"]: expected a string, a list of plural forms or an object',
        'bad.json: $.strings["card.b.title"]: expected a string, a list of plural forms or an object',
    ]
