"""Word-level diffs for the reviewer: only the changed words are marked, and the whole text is always there."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from catalog.domain.worddiff import PAIR_BUDGET, Segment, field_diff, text_diff, words

OLD_NOTE = (
    "USE WHEN: the clinician dictates or asks to save a new clinical note for the current visit.\n"
    "DO NOT USE WHEN: an existing draft should be changed (use updateClinicalNoteDraft).\n"
    "REQUIRES: patientId, encounterId, the note type (SOAP, progress or phone) and the note text.\n"
    "PRODUCES: an unsigned draft note linked to the encounter."
)
NEW_NOTE = (
    "USE WHEN: the clinician dictates, summarises or asks to save any note about the patient.\n"
    "DO NOT USE WHEN: an existing draft should be changed (use updateClinicalNoteDraft).\n"
    "REQUIRES: patientId, encounterId and the note text; the note type is optional.\n"
    "PRODUCES: a clinical note linked to the encounter."
)


def sides(segments: list[Segment] | tuple[Segment, ...]) -> tuple[str, str]:
    old = "".join(s.text for s in segments if s.op != "insert")
    new = "".join(s.text for s in segments if s.op != "delete")
    return old, new


def changed(segments: list[Segment], op: str) -> list[str]:
    return [s.text for s in segments if s.op == op]


def test_only_the_changed_words_are_marked() -> None:
    segments = text_diff("the clinician signs the letter", "the clinician reviews the letter")
    assert segments == [
        Segment("equal", "the clinician "),
        Segment("delete", "signs"),
        Segment("insert", "reviews"),
        Segment("equal", " the letter"),
    ]


def test_the_demo_rewrite_reads_as_its_changed_words_and_keeps_every_line() -> None:
    segments = text_diff(OLD_NOTE, NEW_NOTE)
    assert sides(segments) == (OLD_NOTE, NEW_NOTE)
    assert ", summarises" in changed(segments, "insert")
    assert ", the note type (SOAP, progress or phone)" in changed(segments, "delete")
    # The unchanged line is one untouched stretch, not cut up.
    assert any("DO NOT USE WHEN: an existing draft should be changed" in s.text for s in segments if s.op == "equal")


def test_whitespace_between_two_changed_words_joins_the_change() -> None:
    segments = text_diff("ask the nurse now", "tell a doctor now")
    assert segments == [
        Segment("delete", "ask the nurse"),
        Segment("insert", "tell a doctor"),
        Segment("equal", " now"),
    ]


def test_a_changed_comma_is_shown_on_its_own() -> None:
    segments = text_diff("dose, route and time", "dose; route and time")
    assert changed(segments, "delete") == [","] and changed(segments, "insert") == [";"]


def test_a_long_text_is_never_cut() -> None:
    body = " ".join(f"word{i}" for i in range(3000))
    old, new = body + " old ending.", body + " new ending."
    segments = text_diff(old, new)
    assert sides(segments) == (old, new)
    assert changed(segments, "delete") == ["old"] and changed(segments, "insert") == ["new"]


def test_past_the_budget_the_middle_is_compared_by_line_and_stays_whole() -> None:
    count = 600  # 600 reordered lines
    old = "\n".join(f"line {i} of the description" for i in range(count))
    new = "\n".join(f"line {(i * 7) % count} of the description" for i in range(count))
    assert len(words(old)) * len(words(new)) > PAIR_BUDGET
    started = time.perf_counter()
    segments = text_diff(old, new)
    assert time.perf_counter() - started < 2.0  # measured about 0.1 s; word by word took seconds
    assert sides(segments) == (old, new)


def test_a_huge_single_line_rewrite_is_one_replacement_and_quick() -> None:
    old = " ".join(f"w{i}" for i in range(20000))
    new = " ".join(f"w{(i * 7) % 20000}" for i in range(20000))
    started = time.perf_counter()
    segments = text_diff(old, new)
    assert time.perf_counter() - started < 2.0
    assert sides(segments) == (old, new)


@given(st.text(alphabet="ab ,.\n", max_size=60), st.text(alphabet="ab ,.\n", max_size=60))
def test_both_texts_come_back_whole_from_any_diff(old: str, new: str) -> None:
    assert sides(text_diff(old, new)) == (old, new)
    assert "".join(words(old)) == old


def test_tiers_and_flags_are_shown_as_old_to_new() -> None:
    tier = field_diff("high", "low")
    assert (tier.kind, tier.old, tier.new, tier.segments) == ("scalar", "high", "low", ())
    assert field_diff(False, True).kind == "scalar" and field_diff(False, True).new == "true"
    assert field_diff(None, "medication").old == ""


def test_texts_are_diffed_by_word_even_when_one_side_is_absent() -> None:
    added = field_diff(None, "Only call after the clinician has read the final text.")
    assert added.kind == "text"
    assert added.segments == (Segment("insert", "Only call after the clinician has read the final text."),)


def test_json_values_are_pretty_printed_with_sorted_keys_and_diffed_by_line() -> None:
    keywords = field_diff({"en": ["sign document", "e-sign"]}, {"de": ["signieren"], "en": ["sign document", "esign"]})
    assert keywords.kind == "json"
    assert sides(keywords.segments) == (keywords.old, keywords.new)
    assert changed(list(keywords.segments), "delete") == ['    "e-sign"\n']
    assert '  "de": [\n    "signieren"\n  ],\n' in changed(list(keywords.segments), "insert")
    same = field_diff({"b": 1, "a": 2}, {"a": 2, "b": 1})
    assert [s.op for s in same.segments] == ["equal"]


def test_non_ascii_text_is_kept_as_written() -> None:
    diff = field_diff({"de": ["Dokument prüfen"]}, {"de": ["Dokument unterschreiben"]})
    assert "prüfen" in diff.old and "\\u00fc" not in diff.old
