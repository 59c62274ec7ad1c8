"""Text the API accepts must be text the database can store.

JSON and URLs can carry a NUL character (`\\u0000`, `%00`), which PostgreSQL text and jsonb columns refuse,
and JSON can carry a lone UTF-16 surrogate (`"\\ud800"`), which UTF-8 cannot encode (so it can be neither
stored nor hashed). Both are refused at the API boundary with the place they were found, instead of failing
deep inside a query as a 500 (and only on PostgreSQL, for NUL).
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest
from ninja.parser import Parser
from pydantic import BaseModel, field_validator

from catalog.domain.checker import unstorable_texts
from catalog.domain.jsonread import RepeatedKeys, loads_once_per_key


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


class BodyParser(Parser):
    """ninja's JSON body parser, refusing a repeated key (the last one would silently win). ninja wraps any parse
    failure in a 400; condor_admin/api.py reads the cause to say what and where."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        data: dict[str, Any] = loads_once_per_key(request.body, root="body")
        return data


def body_refusal(exc: BaseException) -> tuple[int, dict[str, Any]] | None:
    """The answer for a body ninja could not parse, from the parse error it wrapped (None: not a body error)."""
    cause = exc.__cause__
    if isinstance(cause, RepeatedKeys):
        return 422, {"detail": "invalid request", "errors": cause.problems}
    if isinstance(cause, json.JSONDecodeError):
        return 400, {"detail": f"the body is not JSON: {cause.msg} at line {cause.lineno}, column {cause.colno}"}
    if isinstance(cause, UnicodeDecodeError):
        return 400, {"detail": f"the body is not UTF-8 ({cause.reason} at byte {cause.start})"}
    return None
