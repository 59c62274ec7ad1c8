"""The retrieval case file (`condor-retrieval-cases/v1`): prompts as clinicians type them, with the tools they need."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CASES_FORMAT = "condor-retrieval-cases/v1"
# A case is for tuning (the figures may be looked at while choosing signals and weights) or held back (written
# before any score was seen and never tuned on: the honest figure, reported apart).
TUNE, HELD_BACK = "tune", "held-back"
SPLITS = (TUNE, HELD_BACK)


class CasesError(ValueError):
    pass


@dataclass(frozen=True)
class Case:
    id: str
    prompt: str
    language: str
    system: str
    profile: str | None
    attachments: bool
    multi_entity_intake: bool
    expected: list[str]
    split: str = TUNE


def load_cases(path: Path) -> list[Case]:
    """Parse a case file; every problem names the case and field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CasesError(f"{path}: cannot read the case file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != CASES_FORMAT:
        raise CasesError(f"{path}: format must be {CASES_FORMAT!r}")
    cases = [_case(f"{path.name}: cases[{i}]", raw) for i, raw in enumerate(data.get("cases") or [])]
    if not cases:
        raise CasesError(f"{path}: no cases")
    return cases


def _case(where: str, raw: Any) -> Case:  # one entry of the file's JSON, checked field by field
    try:
        case = Case(
            id=str(raw["id"]),
            prompt=str(raw["prompt"]),
            language=str(raw.get("language", "")),
            system=str(raw.get("system", "condor")),
            profile=raw.get("profile"),
            attachments=bool(raw.get("attachments", False)),
            multi_entity_intake=bool(raw.get("multiEntityIntake", False)),
            expected=[str(x) for x in raw["expected"]],
            split=str(raw.get("split", TUNE)),
        )
    except (KeyError, TypeError) as exc:
        raise CasesError(f"{where}: missing or malformed field {exc}") from exc
    if not case.prompt.strip() or not case.expected:
        raise CasesError(f"{where} ({case.id}): prompt and expected are required")
    if case.split not in SPLITS:
        raise CasesError(f"{where} ({case.id}): split must be one of {', '.join(SPLITS)}, got {case.split!r}")
    return case
