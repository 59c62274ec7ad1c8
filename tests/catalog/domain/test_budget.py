from __future__ import annotations

import pytest

from catalog.domain.budget import (
    MANIFEST_MAX_BYTES,
    candidate_manifest_line,
    param_synopsis,
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


def test_manifest_line_uses_use_when_and_produces_and_counts_the_fragment() -> None:
    plain = candidate_manifest_line(declared_id="prescribeMedication", rag_description=RAG)
    assert plain.text == (
        "prescribeMedication: the clinician asks to prescribe a new medication for the patient in context."
        " → a draft prescription awaiting approval."
    )
    assert plain.within_bounds and not plain.truncated
    with_fragment = candidate_manifest_line(
        declared_id="prescribeMedication", rag_description=RAG, instruction_fragment="Confirm dose and route."
    )
    assert with_fragment.text.endswith(" — Confirm dose and route.")
    assert with_fragment.natural_bytes == plain.natural_bytes + utf8_len(" — Confirm dose and route.")


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
