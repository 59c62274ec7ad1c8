"""Text the API accepts must be text the database can store.

JSON and URLs can carry a NUL character (`\\u0000`, `%00`), which PostgreSQL text and jsonb columns refuse,
and JSON can carry a lone UTF-16 surrogate (`"\\ud800"`), which UTF-8 cannot encode (so it can be neither
stored nor hashed). Both are refused at the API boundary with the place they were found, instead of failing
deep inside a query as a 500 (and only on PostgreSQL, for NUL).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, field_validator

from catalog.domain.checker import unstorable_texts


def unstorable_text(value: Any) -> str | None:
    """The first unstorable text in a JSON value, with where it is (`drug[0]: contains …`), or None."""
    problems = unstorable_texts(value)
    return problems[0].removeprefix("$: ") if problems else None


class ApiInput(BaseModel):
    """Base of request bodies: every field (at any depth) must be storable text. (A plain pydantic model: JSON
    bodies need none of ninja's Schema machinery for ORM objects, which tripled the validation's CPU.)"""

    @field_validator("*", mode="after")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        problem = unstorable_text(value)
        if problem:
            raise ValueError(problem)
        return value
