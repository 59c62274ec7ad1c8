"""A tool's phrases: each description sentence and keyword alone; the DO NOT USE WHEN sentence as a negative."""

from __future__ import annotations

import pytest

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


# The seeds' ways of writing the same four lines (tool files, not manifests): no colon, any case, the heading
# alone on its line with its text (often a list) below.
NEGATIVE = ("the change concerns clinical data such as diagnoses.",)
SEED_STYLES = {
    "no colon": (
        "USE WHEN the user corrects a patient's address or phone number.\n"
        "DO NOT USE WHEN the change concerns clinical data such as diagnoses.\n"
        "REQUIRES patientId.\n"
        "PRODUCES the updated demographics."
    ),
    "sentence case": (
        "Use when the user corrects a patient's address or phone number.\n"
        "Do not use when the change concerns clinical data such as diagnoses.\n"
        "Requires: patientId.\n"
        "Produces - the updated demographics."
    ),
    "headings alone on their line": (
        "USE WHEN\n"
        "the user corrects a patient's address or phone number.\n"
        "\n"
        "DO NOT USE WHEN:\n"
        "\n"
        "- the change concerns clinical data such as diagnoses.\n"
        "\n"
        "REQUIRES\n"
        "patientId.\n"
        "PRODUCES\n"
        "the updated demographics."
    ),
    "markdown": (
        "## Use when\n"
        "the user corrects a patient's address or phone number.\n"
        "**Do not use when**: the change concerns clinical data such as diagnoses.\n"
        "- REQUIRES: patientId.\n"
        "- PRODUCES: the updated demographics."
    ),
}


@pytest.mark.parametrize("style", SEED_STYLES)
def test_the_do_not_use_line_is_negative_however_the_seed_writes_it(style: str) -> None:
    phrases = tool_phrases(SEED_STYLES[style], None)
    assert phrases.negative == NEGATIVE
    assert phrases.positive == (
        "the user corrects a patient's address or phone number.",
        "patientId.",
        "the updated demographics.",
    )
    assert "diagnoses" not in lexical_text(SEED_STYLES[style], None, "updatePatientDemographics")


def test_a_heading_covers_its_wrapped_lines_and_its_list_until_a_blank_line_or_the_next_heading() -> None:
    phrases = tool_phrases(
        "Updates a patient's address.\n"
        "DO NOT USE WHEN the change concerns clinical data\n"
        "such as diagnoses or allergies.\n"
        "\n"
        "Addresses abroad keep their country.\n"
        "Do not use when\n"
        "- the patient is not in context\n"
        "- the address is a\n"
        "  post-office box\n"
        "Returns the changed fields.\n"
        "Produces the changed fields.",
        None,
    )
    assert phrases.negative == (
        "the change concerns clinical data",
        "such as diagnoses or allergies.",
        "the patient is not in context",
        "the address is a",
    )
    assert phrases.positive == (
        "Updates a patient's address.",
        "Addresses abroad keep their country.",
        "Returns the changed fields.",  # after the list: the description's own text again
        "the changed fields.",  # PRODUCES, colon or not, ends the section
    )
    assert tool_phrases("Do not use when\n- a\n  b wrapped\nC.", None).negative == ("a", "b wrapped")


def test_a_do_not_use_sentence_inside_a_paragraph_is_negative() -> None:
    phrases = tool_phrases(
        "Updates a patient's address. Do not use when the change concerns diagnoses. Use whenever the user moves.",
        None,
    )
    assert phrases.negative == ("the change concerns diagnoses.",)
    assert phrases.positive == ("Updates a patient's address.", "Use whenever the user moves.")


def test_sentences_that_only_start_like_a_heading_stay_positive() -> None:
    phrases = tool_phrases("When the user asks for notes.\nNote that drafts are kept.\nRequirements: none.", None)
    assert phrases.negative == ()
    assert phrases.positive == ("When the user asks for notes.", "Note that drafts are kept.", "Requirements: none.")
