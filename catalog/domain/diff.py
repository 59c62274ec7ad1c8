"""Per-tool revision diffs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.domain.vocabulary import SAFETY_RELEVANT_FIELDS


def field_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list[Any]]:
    """{field: [old, new]} for every field whose value differs."""
    return {
        name: [old.get(name), new.get(name)] for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name)
    }


def safety_fields(changed: Mapping[str, Any]) -> list[str]:
    """The safety-relevant axes among the changed fields, in the glossary's order."""
    return [name for name in SAFETY_RELEVANT_FIELDS if name in changed]
