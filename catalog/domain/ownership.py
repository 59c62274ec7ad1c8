"""Owner derivation: the most specific ownership rule for (plane, module)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from catalog.domain.vocabulary import ANY_MODULE

T = TypeVar("T")


def derive_owner(plane: str, module: str, rules: Mapping[tuple[str, str], T]) -> T | None:
    """Return the rule value for (plane, module), else (plane, "*"), else None (unowned).

    `rules` maps (plane, module-or-"*") to whatever identifies the rule (a team id, a rule id, ...).
    """
    exact = rules.get((plane, module))
    if exact is not None:
        return exact
    return rules.get((plane, ANY_MODULE))


# The owner filter's value for tools no ownership rule covers (catalog, findings, API: one spelling).
UNOWNED = "-"
