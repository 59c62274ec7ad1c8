"""Arguments as an approver reads them (no Django here): schema labels, shortened ids, readable values.

The seed's rule for cards is "NEVER show UUIDs"; an approver sometimes needs the id, so ids are shown
shortened with the full value kept for a hover title and the detail view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ID_HINT = re.compile(r"\s*\((?:uuid|id)\)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class ArgRow:
    key: str
    label: str
    display: str  # what the row shows (ids shortened)
    full: str  # the whole value, for the hover title and the detail view
    shortened: bool
    changed: bool = False  # approved value differs from the proposed one


def short_id(value: str) -> str:
    """`3f2a61d0-…-9c1d`: enough to tell two ids apart at a glance, never a wall of hex."""
    return UUID.sub(lambda m: f"{m.group(0)[:8]}…{m.group(0)[-4:]}", value)


def humanise(key: str) -> str:
    words = _HUMP.sub(" ", key).replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() if words else key


def label_for(key: str, schema: Mapping[str, Any] | None) -> str:
    """The property's title, else its description without the trailing "(UUID)." noise, else the key."""
    props = (schema or {}).get("properties") if isinstance(schema, Mapping) else None
    spec = props.get(key) if isinstance(props, Mapping) else None
    if isinstance(spec, Mapping):
        for name in ("title", "description"):
            text = spec.get(name)
            if isinstance(text, str) and text.strip():
                text = _ID_HINT.sub(" ", text.strip()).strip().rstrip(".").strip()
                if text and len(text) <= 60:
                    return text
    return humanise(key)


def render_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def readable_args(
    args: Mapping[str, Any] | None, schema: Mapping[str, Any] | None = None, compare_to: Mapping[str, Any] | None = None
) -> list[ArgRow]:
    """One row per argument, in the schema's property order (then the rest, sorted)."""
    args = args or {}
    props = (schema or {}).get("properties") if isinstance(schema, Mapping) else None
    order = [k for k in (props or {}) if k in args] + sorted(k for k in args if not props or k not in props)
    rows = []
    for key in order:
        full = render_value(args[key])
        display = short_id(full)
        changed = compare_to is not None and (key not in compare_to or compare_to[key] != args[key])
        rows.append(ArgRow(key, label_for(key, schema), display, full, display != full, changed))
    if compare_to is not None:
        for key in sorted(k for k in compare_to if k not in args):
            rows.append(ArgRow(key, label_for(key, schema), "(removed)", "(removed)", False, True))
    return rows
