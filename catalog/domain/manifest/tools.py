"""What every dialect's tool parser shares: the tool id's checks, naming the tool in its problems, and the
uniqueness of ids (and, where the dialect refuses them, of canonical keys)."""

from __future__ import annotations

import json
from typing import Any

from catalog.domain.checker import Checker
from catalog.domain.keys import canonical_key
from catalog.domain.manifest.base import (
    ALIASES_MAX,
    ID_MAX,
    SCHEMA_BYTES_MAX,
    SCHEMA_DEPTH_MAX,
    TOOL_ID_CHARS,
    Manifest,
)


def parse_tool_id(obj: dict[str, Any], where: str, c: Checker) -> str:
    """The tool's `id`: non-empty, in the tool-id alphabet, and short enough for its column in declared and in
    canonical form."""
    tool_id = c.nonempty(obj, "id", where, max_length=ID_MAX, chars=TOOL_ID_CHARS)
    # The canonical key is stored too, and is longer than the id when camelCase humps become dots.
    if tool_id and len(tool_id) <= ID_MAX < len(canonical_key(tool_id)):
        c.problem(f"{where}.id", f"at most {ID_MAX} characters in canonical form, got {len(canonical_key(tool_id))}")
    return tool_id


def label_tool_problems(c: Checker, before: int, tool_id: str) -> None:
    """Name the tool in every problem found inside it (those after index `before`): a location alone is hard
    to find in 350 tools."""
    if not tool_id or len(tool_id) > ID_MAX:  # an overlong id is itself the problem: not repeated in each
        return
    label = f" (tool {tool_id})"
    for k in range(before, len(c.problems)):
        if not c.problems[k].endswith(label):
            c.problems[k] += label


def check_tool_ids(manifest: Manifest, c: Checker, *, fold_collisions: bool) -> None:
    """Tool ids are unique; with `fold_collisions`, so are the canonical keys of ids and aliases together."""
    c.unique(((f"tools[{i}].id", t.declared_id) for i, t in enumerate(manifest.tools) if t.declared_id), "tool id")
    if not fold_collisions:
        return
    folded: list[tuple[str, str]] = []
    spellings: dict[str, str] = {}
    for i, tool in enumerate(manifest.tools):
        if not tool.declared_id:
            continue
        names = [(f"tools[{i}].id", tool.declared_id)]
        names += [(f"tools[{i}].aliases[{j}]", alias) for j, alias in enumerate(tool.aliases)]
        own: set[str] = set()
        for where, name in names:
            key = canonical_key(name)
            if key in own:
                continue  # an alias that folds to the tool's own key is merely redundant
            own.add(key)
            folded.append((where, key))
            spellings.setdefault(key, name)
    seen: dict[str, str] = {}
    for where, key in folded:
        if key in seen:
            c.problem(
                where,
                f"canonical key {key!r} collides with {seen[key]} ({spellings[key]!r}); "
                "two spellings of one key would route to one owner",
            )
        else:
            seen[key] = where


def parse_aliases(obj: dict[str, Any], where: str, c: Checker) -> list[str]:
    """`aliases`: other spellings of the tool, in the tool-id alphabet, each as long as an id may be."""
    return c.strings(
        obj.get("aliases", []), f"{where}.aliases", max_items=ALIASES_MAX, max_length=ID_MAX, chars=TOOL_ID_CHARS
    )


def parse_input_schema(obj: dict[str, Any], where: str, c: Checker) -> dict[str, Any] | None:
    """`inputSchema`: a JSON object of bounded nesting and size (it is stored, diffed and shown on pages)."""
    if "inputSchema" not in obj:
        return None
    schema = c.obj(obj["inputSchema"], f"{where}.inputSchema")
    if schema is None:
        return None
    depth = nesting_depth(schema)
    if depth > SCHEMA_DEPTH_MAX:
        c.problem(f"{where}.inputSchema", f"nested at most {SCHEMA_DEPTH_MAX} levels deep, got {depth}")
        return None
    size = len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if size > SCHEMA_BYTES_MAX:
        c.problem(f"{where}.inputSchema", f"at most {SCHEMA_BYTES_MAX} bytes as compact JSON, got {size}")
        return None
    return schema


def nesting_depth(value: Any) -> int:
    """How many objects and lists deep `value` goes (a scalar is 0). Iterative: no recursion limit to hit."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
    return deepest
