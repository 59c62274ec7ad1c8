"""Text the API accepts must be text the database can store.

JSON and URLs can carry a NUL character (`\\u0000`, `%00`), which PostgreSQL text and jsonb columns refuse,
and JSON can carry a lone UTF-16 surrogate (`"\\ud800"`), which UTF-8 cannot encode (so it can be neither
stored nor hashed). Both are refused at the API boundary with the place they were found, instead of failing
deep inside a query as a 500 (and only on PostgreSQL, for NUL).
"""

from __future__ import annotations

from typing import Any

from ninja import Schema
from pydantic import field_validator


def unstorable_text(value: Any) -> str | None:
    """Where (and what) the first unstorable text in a JSON value is, e.g. `.args.dose: contains …`, or None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:  # iterative: a deeply nested body must not overflow the stack here
        where, item = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item)
            if problem:
                return f"{where}: {problem}" if where else problem
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                problem = _text_problem(str(key))
                if problem:
                    return f"{where} key {key!r}: {problem}" if where else f"key {key!r}: {problem}"
                stack.append((f"{where}.{key}", child))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which cannot be stored; remove it"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone UTF-16 surrogate, which is not Unicode text; send valid UTF-8"
    return None


class ApiInput(Schema):
    """Base of request bodies: every field (at any depth) must be storable text."""

    @field_validator("*", mode="after")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        problem = unstorable_text(value)
        if problem:
            raise ValueError(problem)
        return value
