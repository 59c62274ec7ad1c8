"""Output safety as pure functions: CSV cells, one-line fields and Slack text."""

from __future__ import annotations

import csv
import io

import pytest

from catalog.domain.output_safety import csv_cell, one_line, slack_literal, slack_text

FORMULAS = [
    '=HYPERLINK("http://evil.example","x")',
    "=1+1",
    "+1+1",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "\n=1+1",
    "=cmd|' /C calc'!A0",
]


@pytest.mark.parametrize("value", FORMULAS)
def test_a_cell_a_spreadsheet_would_run_is_prefixed_with_a_quote(value: str) -> None:
    assert csv_cell(value) == "'" + value


@pytest.mark.parametrize("value", ["medication", "list.active.medications", "a=b", "1-2", " =x", "", "'=x"])
def test_other_text_is_left_as_it_is(value: str) -> None:
    assert csv_cell(value) == value


@pytest.mark.parametrize("value", [None, True, False, 0, 3, -1])
def test_values_that_are_not_text_are_left_to_the_csv_module(value: object) -> None:
    assert csv_cell(value) is value


def test_quotes_and_separators_of_a_neutralised_cell_survive_a_round_trip() -> None:
    out = io.StringIO()
    csv.writer(out).writerow([csv_cell(v) for v in ['=HYPERLINK("http://evil.example","x")', "a,b", 'say "hi"']])
    assert out.getvalue() == '"\'=HYPERLINK(""http://evil.example"",""x"")","a,b","say ""hi"""\r\n'
    assert next(csv.reader(io.StringIO(out.getvalue()))) == [
        '\'=HYPERLINK("http://evil.example","x")',
        "a,b",
        'say "hi"',
    ]


def test_one_line_turns_control_characters_and_separators_into_spaces() -> None:
    assert one_line("a\nb\r\nc\td\x00e\x1bf\x7fg\x85h\u2028i\u2029j", 100) == "a b  c d e f g h i j"
    assert one_line("\u202eevil\u202c \u2066x\u2069", 100) == "evil x"  # bidi controls go
    assert one_line("Müller, Zoë", 100) == "Müller, Zoë"


def test_one_line_bounds_the_length_and_marks_the_cut() -> None:
    assert one_line("x" * 10, 10) == "x" * 10
    assert one_line("x" * 11, 10) == "x" * 9 + "…"
    assert len(one_line("y" * 10_000, 80)) == 80


def test_slack_text_escapes_every_control_sequence() -> None:
    text = "<!channel> <!here> <@U024BE7LH> <#C024BE7LR> <https://evil.example|click> & co"
    assert slack_text(text) == (
        "&lt;!channel&gt; &lt;!here&gt; &lt;@U024BE7LH&gt; &lt;#C024BE7LR&gt; "
        "&lt;https://evil.example|click&gt; &amp; co"
    )
    assert slack_text("&lt;") == "&amp;lt;"  # an entity typed by the caller stays as typed


def test_slack_literal_is_one_code_span_on_one_line() -> None:
    assert slack_literal("dr.house", 80) == "`dr.house`"
    assert slack_literal("a`b\nc *bold* [x](https://evil.example)", 80) == "`a'b c *bold* [x](https://evil.example)`"
    assert slack_literal("\n\n", 80) == "`-`"
    assert slack_literal("z" * 200, 20) == "`" + "z" * 19 + "…`"
