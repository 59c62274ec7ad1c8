"""The checks of card strings, each both ways: missing, placeholders, plural forms, markup, same as source,
too long; and which translations ship."""

from __future__ import annotations

from catalog.cards.domain.checks import LocaleSpec, StringSpec, check_key, check_translation, ships
from catalog.cards.domain.text import markup, placeholders
from catalog.cards.domain.vocabulary import Check, Severity

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


# --- shipping --------------------------------------------------------------------------------------


def test_only_translated_texts_without_errors_ship() -> None:
    warning = check_translation(StringSpec("card.lab.kv.unit", "Unit"), DE, ["Unit"])
    error = check_translation(WARNING, DE, ["Wechselwirkung"])
    assert ships("translated", warning) and ships("reviewed", [])
    assert not ships("translated", error) and not ships("fuzzy", []) and not ships("untranslated", [])
