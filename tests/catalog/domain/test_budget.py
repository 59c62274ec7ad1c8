from __future__ import annotations

import pytest

from catalog.domain.budget import (
    MANIFEST_MAX_BYTES,
    candidate_manifest_line,
    param_synopsis,
    rag_heading,
    rag_line,
    truncate_bytes,
    utf8_len,
)

RAG = (
    "USE WHEN: the clinician asks to prescribe a new medication for the patient in context.\n"
    "DO NOT USE WHEN: the medication is already active.\n"
    "REQUIRES: a patient in context.\n"
    "PRODUCES: a draft prescription awaiting approval."
)


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("exactly10b", 10, "exactly10b"),
        ("abcdefghijk", 10, "abcdefg…"),  # 7 bytes + 3-byte ellipsis
        ("Häufigkeit", 5, "H…"),  # "ä" is 2 bytes: cutting inside it drops the whole character
        ("Häufigkeit", 6, "Hä…"),
        ("", 0, ""),
        ("abc", 2, ""),  # no room for even the marker
    ],
)
def test_truncate_bytes_never_splits_a_character(text: str, limit: int, expected: str) -> None:
    out = truncate_bytes(text, limit)
    assert out == expected
    assert utf8_len(out) <= limit
    out.encode("utf-8").decode("utf-8")  # valid UTF-8


def test_truncate_bytes_with_only_multibyte_characters() -> None:
    text = "äöüß" * 50
    for limit in range(0, 60):
        out = truncate_bytes(text, limit)
        assert utf8_len(out) <= limit


def test_truncate_bytes_refuses_a_negative_limit() -> None:
    with pytest.raises(ValueError, match="limit"):
        truncate_bytes("x", -1)


def test_param_synopsis_lists_required_first_and_marks_optional() -> None:
    schema = {
        "type": "object",
        "properties": {"from": {}, "patientId": {}, "to": {}},
        "required": ["patientId"],
    }
    assert param_synopsis(schema) == "patientId, from?, to?"
    assert param_synopsis({"type": "object"}) == ""
    assert param_synopsis(None) == ""


def test_manifest_line_carries_use_when_requires_and_produces_and_counts_the_fragment() -> None:
    plain = candidate_manifest_line(declared_id="prescribeMedication", rag_description=RAG)
    assert plain.text == (
        "prescribeMedication: the clinician asks to prescribe a new medication for the patient in context."
        " Requires: a patient in context. Produces: a draft prescription awaiting approval."
    )
    assert plain.within_bounds and not plain.truncated
    with_fragment = candidate_manifest_line(
        declared_id="prescribeMedication", rag_description=RAG, instruction_fragment="Confirm dose and route."
    )
    assert with_fragment.text.endswith(" — Confirm dose and route.")
    assert with_fragment.natural_bytes == plain.natural_bytes + utf8_len(" — Confirm dose and route.")
    assert with_fragment.bytes == utf8_len(with_fragment.text) == with_fragment.natural_bytes


def test_manifest_line_reads_the_seeds_headings_without_colons_in_any_case() -> None:
    seed_style = (
        "Use when the clinician asks to prescribe a new medication for the patient in context.\n"
        "do not use when the medication is already active.\n"
        "REQUIRES a patient in context.\n"
        "Produces a draft prescription awaiting approval."
    )
    assert (
        candidate_manifest_line(declared_id="prescribeMedication", rag_description=seed_style).text
        == candidate_manifest_line(declared_id="prescribeMedication", rag_description=RAG).text
    )


def test_a_do_not_use_when_line_is_never_read_as_the_use_when_line() -> None:
    rag = "DO NOT USE WHEN: a card is wanted.\nUSE WHEN: the table view is wanted.\nREQUIRES: x.\nPRODUCES: y."
    assert rag_line(rag, "USE WHEN") == "the table view is wanted."
    assert rag_line(rag, "DO NOT USE WHEN:") == "a card is wanted."
    assert rag_heading("USE WHENEVER the user asks") is None  # a heading is a whole word
    assert rag_heading("  do  not use when — no patient") == ("DO NOT USE WHEN", "no patient")


def test_manifest_line_falls_back_to_the_parameter_synopsis_without_requires_or_produces() -> None:
    line = candidate_manifest_line(
        declared_id="list-vitals",
        rag_description="USE WHEN: the user asks for vitals.",
        input_schema={"properties": {"patientId": {}, "from": {}}, "required": ["patientId"]},
    )
    assert line.text == "list_vitals(patientId, from?): the user asks for vitals."


def test_long_detail_is_shortened_to_fit_and_the_fragment_stays_whole() -> None:
    rag = RAG.replace("a draft prescription awaiting approval.", "a draft prescription " + "with every detail " * 20)
    line = candidate_manifest_line(declared_id="prescribeMedication", rag_description=rag, instruction_fragment="Ask.")
    assert line.bytes == MANIFEST_MAX_BYTES
    assert line.text.endswith("… — Ask.") and line.truncated
    assert line.within_bounds  # compaction of the detail is not a budget overrun
    assert line.required_bytes == utf8_len(
        "prescribeMedication: the clinician asks to prescribe a new medication for the patient in context. — Ask."
    )


def test_manifest_line_shows_hyphenated_ids_as_the_llm_sees_them() -> None:
    line = candidate_manifest_line(
        declared_id="show-modal", rag_description="Open a modal.", input_schema={"properties": {"title": {}}}
    )
    assert line.text == "show_modal(title?): Open a modal."
    assert not line.within_bounds and line.natural_bytes < 120


def test_manifest_line_is_bounded_and_reports_its_natural_size() -> None:
    long_rag = "USE WHEN: " + "ärztliche Dokumentation " * 30
    line = candidate_manifest_line(declared_id="x", rag_description=long_rag)
    assert line.bytes <= MANIFEST_MAX_BYTES < line.natural_bytes
    assert line.truncated and line.text.endswith("…")
    assert not line.within_bounds and line.required_bytes > MANIFEST_MAX_BYTES
