"""Text the console writes for other programs to read, made safe for them: CSV cells a spreadsheet will not run,
and caller-supplied fields in notifications that cannot forge lines, links or mentions.

- `csv_cell`: a cell a spreadsheet reads as text, never as a formula (OWASP, "CSV Injection").
- `one_line`: a caller-supplied field on one line of a message: no control characters, bounded length.
- `slack_text` / `slack_literal`: a Slack-compatible webhook's text, and a caller's field inside it, shown as
  typed (no mentions, links or formatting).
"""

from __future__ import annotations

import unicodedata
from typing import Any

# A cell starting with one of these is a formula (or a DDE command) to Excel, LibreOffice and Google Sheets;
# OWASP lists = + - @ tab and carriage return. A line feed is as invisible as a carriage return, so it goes too.
FORMULA_STARTS = frozenset("=+-@\t\r\n")
# Characters that reorder what follows them on screen (bidi embeddings, overrides, isolates and marks): in a
# message they can make `approve` read as something else.
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
ELLIPSIS = "…"


def csv_cell(value: Any) -> Any:
    """The value as a CSV cell: text that a spreadsheet would take for a formula gets a leading `'`, which makes
    it text (OWASP's advice; the csv module does the quoting and the doubling of quotes). Other values (numbers,
    booleans, None) are written by the csv module as they are and cannot start a formula."""
    if isinstance(value, str) and value[:1] in FORMULA_STARTS:
        return "'" + value
    return value


def one_line(value: str, limit: int) -> str:
    """A caller-supplied field for one line of a message: control characters (Unicode category Cc: newlines,
    carriage returns, tabs, NUL, escape), line and paragraph separators and bidi controls each become a space or
    go, so the field cannot start a line of its own or turn the text around; at most `limit` characters, the
    cut marked with an ellipsis."""
    kept = []
    for ch in value:
        category = unicodedata.category(ch)
        if category in ("Cc", "Zl", "Zp"):
            kept.append(" ")
        elif ch not in _BIDI_CONTROLS:
            kept.append(ch)
    text = "".join(kept)
    return text if len(text) <= limit else text[: max(0, limit - 1)] + ELLIPSIS


def slack_text(text: str) -> str:
    """Text for a Slack-compatible webhook, as Slack's "Escaping text" asks: `&`, `<` and `>` as entities.
    Every control sequence (`<!channel>`, `<!here>`, `<@U123>`, `<#C123>`, `<http://x|a link>`) starts with `<`,
    so none survives; the text reads as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_literal(value: str, limit: int) -> str:
    """A caller-supplied field inside a webhook's text (before `slack_text`): on one line (`one_line`) and in
    a code span, where Slack and Mattermost apply no formatting, links, auto-links or `@channel` mentions. A
    backtick would close the span, so it becomes `'`."""
    text = one_line(value, limit).replace("`", "'")
    return f"`{text}`" if text.strip() else "`-`"
