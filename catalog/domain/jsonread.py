"""Reading JSON that people and services send: a repeated key in an object is refused with its location.

Python's json (like most readers) keeps the last of two equal keys and says nothing: a manifest or a request
could then show a reviewer one value (`"hitlTier": "high"`) while another (`"hitlTier": "low"`) is what counts.
"""

from __future__ import annotations

import json
from typing import Any

from catalog.domain.checker import join_key


class RepeatedKeys(Exception):
    """Valid JSON with a key repeated in some object; `problems` locates each one (`tools[0].hitlTier: …`)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


class _Marked(dict[str, Any]):
    """A decoded object in which some key appeared more than once (`repeated`, in order)."""

    repeated: list[str]


def _pairs(found: list[_Marked]) -> Any:
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        marked = _Marked(obj)
        seen: set[str] = set()
        marked.repeated = []
        for key, _ in pairs:
            if key in seen:
                marked.repeated.append(key)
            seen.add(key)
        found.append(marked)
        return marked

    return build


def loads_once_per_key(text: str | bytes, *, root: str = "") -> Any:
    """`json.loads`, raising RepeatedKeys when an object repeats a key (json.JSONDecodeError as usual for text
    that is not JSON). Locations start at `root` (e.g. "body")."""
    found: list[_Marked] = []
    data = json.loads(text, object_pairs_hook=_pairs(found))
    if found:
        raise RepeatedKeys(_locate(data, root))
    return data


def _locate(data: Any, root: str) -> list[str]:
    """Where each repeated key is, in document order (iterative: deep nesting cannot overflow the stack)."""
    problems: list[str] = []
    stack: list[tuple[str, Any]] = [(root, data)]
    while stack:
        here, item = stack.pop()
        if isinstance(item, _Marked):
            for key in dict.fromkeys(item.repeated):
                problems.append(
                    f"{join_key(here, key)}: the key appears more than once in this object; JSON readers keep "
                    "only one of them, so say it once"
                )
        if isinstance(item, dict):
            stack.extend((join_key(here, str(key)), child) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((f"{here}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return problems
