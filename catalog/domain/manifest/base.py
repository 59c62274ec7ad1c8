"""What every manifest dialect produces and shares: the parsed `Manifest`, its sections, the refusal, the
column widths a value must fit, and the `Dialect` record a dialect module registers itself with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from catalog.domain.checker import Checker
from catalog.domain.descriptor import Descriptor

MAX_BASELINE_COUNT = 2**31 - 1
# Column widths (catalog/models): a longer value failed the insert on PostgreSQL, a 500 (SQLite does not
# enforce them). tests/catalog/services/test_import_fuzz.py checks that they agree with the models.
ID_MAX = 200  # tool ids, and so their canonical keys and LLM names
NAME_MAX = 200  # team names, on-call handles and channels; the source repository
SLUG_MAX = 100  # team, profile, floor and agent ids; modules, categories, policy domains; the source commit
PATH_MAX = 300  # metadataRef, source


@dataclass(frozen=True)
class Team:
    id: str
    name: str
    oncall: str
    channel: str
    escalation: str


@dataclass(frozen=True)
class OwnershipRule:
    plane: str
    module: str
    team: str


@dataclass(frozen=True)
class Profile:
    id: str
    clinical: bool
    availability: list[str]
    include: list[str]


@dataclass(frozen=True)
class ForcedFloor:
    id: str
    trigger: str
    tools: list[str]


@dataclass(frozen=True)
class Agent:
    id: str
    categories: list[str]


@dataclass
class Manifest:
    system: str
    format: str
    sha256: str
    source_repository: str = ""
    source_commit: str = ""
    baseline_count: int | None = None
    teams: list[Team] = field(default_factory=list)
    ownership: list[OwnershipRule] = field(default_factory=list)
    profiles: list[Profile] = field(default_factory=list)
    forced_floors: list[ForcedFloor] = field(default_factory=list)
    agents: list[Agent] = field(default_factory=list)
    tools: list[Descriptor] = field(default_factory=list)


class ManifestError(Exception):
    """A manifest that cannot be imported; `problems` lists every located problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(f"{len(problems)} problem(s) in manifest: " + "; ".join(problems[:5]))


# A dialect fills the manifest from the decoded top-level object, recording each problem in the checker
# instead of raising: (data, manifest, checker, ids of the teams already stored).
ParseBody = Callable[[dict[str, Any], Manifest, Checker, set[str]], None]


@dataclass(frozen=True)
class Dialect:
    """One manifest format: its `format` string, the system its tools belong to, and its parser."""

    format: str
    system: str
    parse: ParseBody
