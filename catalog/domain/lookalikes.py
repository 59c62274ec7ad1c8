"""Characters that pass for ASCII: one table for every check that must not be fooled by them (four-eyes compares a
requester with the approver through it; the `llm-text-manipulation` rule folds a tool's text with it before it
matches its patterns).

The single-character entries of Unicode's confusables.txt (UTS #39, 13.0) for Cyrillic, Greek, Latin and Armenian
letters, and the dash, dot and colon look-alikes. Applied before case folding (uppercase Greek eta looks like H,
lowercase like n). A table, not a library: confusable-homoglyphs (the maintained one) ships the pairs symmetrised,
so a character's prototype cannot be read from it, and `confusables`, which ships the file, is no longer released.
NFKC already folds fullwidth and mathematical letters.
"""

from __future__ import annotations

LETTER_GROUPS = (
    ("АВЕЅІЈКМНОРСТУХ", "ABESIJKMHOPCTYX"),  # Cyrillic capitals
    ("аеорсухѕіјһԁԛԝѡьвгкмнтүѵԍӏ", "aeopcyxsijhdqwwbbrkmhtyvgl"),  # Cyrillic small letters
    ("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX"),  # Greek capitals
    ("αβειηκνορτυχγσ", "abeinkvoptuxyo"),  # Greek small letters
    ("ɑɡıɪɩʀʏᴄᴏᴜᴠᴡᴢꜱ", "agiiirycouvwzs"),  # Latin IPA letters and small capitals
    ("օսհոգ", "ouhnq"),  # Armenian
)
SEPARATOR_GROUPS = (
    ("‐‑‒–—―−˗⁃۔", "----------"),  # dashes and minus signs
    ("·•‧∙", "...."),  # dots
    ("ː˸։∶꞉", ":::::"),  # colons
)


def _table(groups: tuple[tuple[str, str], ...]) -> dict[int, int]:
    return str.maketrans("".join(a for a, _ in groups), "".join(b for _, b in groups))


# Letters of another script that look Latin, each to the Latin letter it passes for (`str.translate`).
LETTERS = _table(LETTER_GROUPS)
# The letters and the separators: what a name (a requester, an approver) can be disguised with.
LETTERS_AND_SEPARATORS = _table(LETTER_GROUPS + SEPARATOR_GROUPS)
