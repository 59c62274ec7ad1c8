"""A small validator for JSON manifests: collects every located problem instead of stopping at the first."""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, cached_property
from typing import Any


@dataclass(frozen=True)
class CharacterSet:
    """The characters a kind of value may use: a full-match pattern and the same rule said for a person."""

    pattern: str
    rule: str

    @cached_property
    def _compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern)

    def allows(self, value: str) -> bool:
        return self._compiled.fullmatch(value) is not None


@cache
def _enum_values(allowed: type[StrEnum]) -> tuple[str, ...]:
    """An enum's values, in declaration order (listing an enum class on every check cost more than the check)."""
    return tuple(member.value for member in allowed)


class Checker:
    """Collects located problems; every accessor returns a usable default so parsing continues."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def problem(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")

    def keys(self, obj: dict[str, Any], where: str, required: Iterable[str], optional: Iterable[str]) -> None:
        required = tuple(required)
        allowed = set(required) | set(optional)
        for key in required:
            if key not in obj:
                self.problem(join_key(where, key), "required key is missing")
        for key in obj:
            if key not in allowed:
                self.problem(join_key(where, key), f"unknown key; allowed keys are {', '.join(sorted(allowed))}")

    def obj(self, value: Any, where: str) -> dict[str, Any] | None:
        if isinstance(value, dict):
            return value
        self.problem(where, f"expected an object, got {type_name(value)}")
        return None

    def list(self, value: Any, where: str, *, max_items: int | None = None) -> list[Any]:
        """The list at `where`; past `max_items`, a problem and only the first `max_items` (still checked)."""
        if not isinstance(value, list):
            self.problem(where, f"expected a list, got {type_name(value)}")
            return []
        if max_items is not None and len(value) > max_items:
            self.problem(where, f"at most {max_items} items, got {len(value)}")
            return value[:max_items]
        return value

    def string(
        self,
        obj: dict[str, Any],
        key: str,
        where: str,
        *,
        nullable: bool = False,
        default: str = "",
        max_length: int | None = None,
        chars: CharacterSet | None = None,
    ) -> Any:
        if key not in obj:
            return None if nullable else default
        value = obj[key]
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            self.problem(
                join_key(where, key), f"expected a string{' or null' if nullable else ''}, got {type_name(value)}"
            )
            return None if nullable else default
        if (max_length is not None and len(value) > max_length) or (
            chars is not None and value and not chars.allows(value)
        ):
            self.text(value, join_key(where, key), max_length=max_length, chars=chars)  # the location only then
        return value

    def text(self, value: str, where: str, *, max_length: int | None = None, chars: CharacterSet | None = None) -> bool:
        """Record whether `value` is too long or (when not empty) has characters outside `chars`."""
        if max_length is not None and len(value) > max_length:
            self.problem(where, f"at most {max_length} characters, got {len(value)}")
            return False
        if chars is not None and value and not chars.allows(value):
            self.problem(where, f"{shown(value)} {chars.rule}")
            return False
        return True

    def nonempty(
        self,
        obj: dict[str, Any],
        key: str,
        where: str,
        *,
        max_length: int | None = None,
        chars: CharacterSet | None = None,
    ) -> str:
        value = self.string(obj, key, where, max_length=max_length, chars=chars)
        if key in obj and isinstance(obj[key], str) and not value.strip():
            self.problem(join_key(where, key), "must not be empty")
        return value

    def boolean(self, obj: dict[str, Any], key: str, where: str, default: bool = False) -> bool:
        if key not in obj:
            return default
        value = obj[key]
        if not isinstance(value, bool):
            self.problem(join_key(where, key), f"expected true or false, got {type_name(value)}")
            return default
        return value

    def enum(
        self,
        obj: dict[str, Any],
        key: str,
        where: str,
        allowed: type[StrEnum],
        *,
        nullable: bool = False,
        default: str = "",
    ) -> Any:
        value = self.string(obj, key, where, nullable=nullable, default=default)
        if value is None or (key not in obj):
            return value
        values = _enum_values(allowed)
        if value not in values:
            self.problem(join_key(where, key), f"unknown value {value!r}; expected one of {', '.join(values)}")
            return None if nullable else default
        return value

    # `builtins.list`: in this class body `list` is the method above.
    def strings(
        self,
        value: Any,
        where: str,
        *,
        max_items: int | None = None,
        max_length: int | None = None,
        chars: CharacterSet | None = None,
    ) -> builtins.list[str]:
        items = self.list(value, where, max_items=max_items)
        out: list[str] = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                fits = (max_length is None or len(item) <= max_length) and (
                    chars is None or not item or chars.allows(item)
                )
                if fits or self.text(item, f"{where}[{i}]", max_length=max_length, chars=chars):
                    out.append(item)
            else:
                self.problem(f"{where}[{i}]", f"expected a string, got {type_name(item)}")
        return out

    def unique(self, items: Iterable[tuple[str, str]], what: str) -> None:
        """`items` are (location, value); report every repeat with the location of the first."""
        seen: dict[str, str] = {}
        for where, value in items:
            if value in seen:
                self.problem(where, f"duplicate {what} {value!r} (first at {seen[value]})")
            else:
                seen[value] = where


def unstorable_texts(value: Any, where: str = "") -> list[str]:
    """Every string (object keys included) that no database column can hold, as `location: problem`.

    A NUL character (`\\u0000`) is refused by PostgreSQL text and jsonb; a lone UTF-16 surrogate (`"\\ud800"`,
    valid JSON syntax) is not Unicode text and cannot be encoded as UTF-8, so it can be neither stored nor
    hashed. Iterative: a deeply nested value must not overflow the stack here.
    """
    problems: list[str] = []
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        here, item = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                problems.append(f"{here or '$'}: {problem}")
        elif isinstance(item, dict):
            for key in item:
                problem = text_problem(str(key))
                if problem:
                    problems.append(f"{here or '$'}: the key {key!r} {problem}")
            stack.extend((join_key(here, str(key)), child) for key, child in reversed(item.items()))
        elif isinstance(item, list | tuple):
            stack.extend((f"{here}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return problems


def text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which cannot be stored; remove it"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone UTF-16 surrogate, which is not Unicode text; send valid UTF-8"
    return None


def shown(value: str, limit: int = 60) -> str:
    """A value quoted for a problem message, cut so that a huge one does not become a huge message."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"… ({len(value)} characters)"


def join_key(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def type_name(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
