"""Arguments checked against a tool's input schema (JSON Schema), with errors that name the location."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Any:
    schema = json.loads(schema_json)
    cls = validator_for(schema, default=Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def _where(path: Any) -> str:
    out = "args"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def schema_errors(args: Mapping[str, Any], schema: Mapping[str, Any] | None) -> list[str]:
    """Every way `args` breaks `schema`, as `args.pzn: '123' does not match '^[0-9]{8}$'`; [] when valid.

    Formats (uuid, date-time) are annotations here, as JSON Schema's default says: a runtime sending a
    malformed id is caught by the tool itself, and refusing on a format the source never enforced would
    turn a working call into a refused one.
    """
    if not schema:
        return []
    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
    except SchemaError as exc:
        return [f"the tool's inputSchema is itself invalid ({exc.message}); fix the catalog manifest"]
    errors = sorted(validator.iter_errors(dict(args)), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{_where(e.absolute_path)}: {e.message}" for e in errors]
