"""A tool's phrases: each description sentence and keyword alone; the DO NOT USE WHEN sentence as a negative."""

from __future__ import annotations

from catalog.rag.domain.phrases import NEGATIVE_MAX, POSITIVE_MAX, id_words, lexical_text, tool_phrases

DESCRIPTION = (
    "USE WHEN: the user corrects a patient's address or phone number.\n"
    "DO NOT USE WHEN: the change concerns clinical data such as diagnoses.\n"
    "REQUIRES: patientId. Only the fields that change.\n"
    "PRODUCES: the updated demographics."
)


def test_sentences_and_keywords_are_positive_and_the_do_not_use_line_is_negative() -> None:
    phrases = tool_phrases(DESCRIPTION, {"en": ["update address"], "de": ["Adresse ändern", "Umzug"]})
    assert phrases.positive == (
        "the user corrects a patient's address or phone number.",
        "patientId.",
        "Only the fields that change.",
        "the updated demographics.",
        "Adresse ändern",  # languages in turn (de, en sorted), so a cap keeps both
        "update address",
        "Umzug",
    )
    assert phrases.negative == ("the change concerns clinical data such as diagnoses.",)
    assert phrases.all == phrases.positive + phrases.negative


def test_phrases_are_capped_keeping_every_language_and_duplicates_count_once() -> None:
    many = {"en": [f"english {i}" for i in range(40)], "de": [f"deutsch {i}" for i in range(40)]}
    phrases = tool_phrases("USE WHEN: x.\nDO NOT USE WHEN: A. B. C. D. E. F.", many)
    assert len(phrases.positive) == POSITIVE_MAX and len(phrases.negative) == NEGATIVE_MAX
    assert {p.split()[0] for p in phrases.positive[1:]} == {"english", "deutsch"}
    assert tool_phrases("Same. Same.", {"en": ["Same."]}).positive == ("Same.",)


def test_the_lexical_text_leaves_out_what_the_tool_is_not_for_and_adds_its_id_words() -> None:
    text = lexical_text(DESCRIPTION, {"en": ["update address"]}, "updatePatientDemographics")
    assert "diagnoses" not in text and "update address" in text
    assert text.endswith("update patient demographics")
    assert id_words("list-fhir_encounters.v2") == "list fhir encounters v2"


def test_a_tool_without_text_has_no_phrases() -> None:
    assert tool_phrases("", None).all == ()
