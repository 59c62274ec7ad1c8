"""Reading a manifest: bytes → JSON → the dialect its `format` names → a validated `Manifest`.

`parse_manifest` never raises on the first bad value: it collects every problem, each with its JSON location,
so the person fixing the source repository sees the whole list at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from catalog.domain.checker import Checker, type_name, unstorable_texts
from catalog.domain.jsonread import RepeatedKeys, loads_once_per_key
from catalog.domain.manifest.base import Manifest, ManifestError
from catalog.domain.manifest.dialects import DIALECTS

# `\u0000` or a `\uD800`-`\uDFFF` escape (either case): the only ways a decoded string can hold a NUL or a surrogate.
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89abcdefABCDEF][0-9a-fA-F]{2})")


def manifest_sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def load_manifest(raw: bytes, *, known_team_ids: Iterable[str] = ()) -> Manifest:
    """Decode and validate a manifest; raise ManifestError with every problem found."""
    try:
        # A repeated key is decoded as "the last one wins": a reviewer reading the first would see another tool.
        text = raw.decode("utf-8")
        data = loads_once_per_key(text)
    except RepeatedKeys as exc:
        raise ManifestError(exc.problems) from exc
    except UnicodeDecodeError as exc:
        raise ManifestError([f"$: not UTF-8 ({exc.reason} at byte {exc.start})"]) from exc
    except json.JSONDecodeError as exc:
        raise ManifestError([f"$: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"]) from exc
    except RecursionError as exc:
        raise ManifestError(["$: arrays or objects nested too deeply to read; no manifest nests like that"]) from exc
    # Text no column can hold would fail deep inside the import (or only on PostgreSQL): refuse it here. Decoded
    # UTF-8 holds neither a NUL in a JSON string (a raw control character is not JSON) nor a surrogate, so only
    # an escape can bring one: without such an escape in the text, no string needs walking.
    if _UNSTORABLE_ESCAPE.search(text):
        unstorable = unstorable_texts(data)
        if unstorable:
            raise ManifestError(unstorable)
    return parse_manifest(data, sha256=manifest_sha256(raw), known_team_ids=known_team_ids)


def parse_manifest(data: Any, *, sha256: str = "", known_team_ids: Iterable[str] = ()) -> Manifest:
    """Validate a decoded manifest with the parser of its dialect; raise ManifestError with every problem."""
    checker = Checker()
    if not isinstance(data, dict):
        raise ManifestError([f"$: expected a JSON object, got {type_name(data)}"])
    fmt = data.get("format")
    if not isinstance(fmt, str) or fmt not in DIALECTS:  # a list or object is not hashable: no `in` on it
        raise ManifestError([f"format: unknown manifest format {fmt!r}; expected one of {', '.join(sorted(DIALECTS))}"])
    dialect = DIALECTS[fmt]
    manifest = Manifest(system=dialect.system, format=fmt, sha256=sha256)
    dialect.parse(data, manifest, checker, set(known_team_ids))
    if checker.problems:
        raise ManifestError(checker.problems)
    return manifest
