"""What every manifest dialect produces and shares: the parsed `Manifest`, its sections, the refusal, the
column widths a value must fit, and the `Dialect` record a dialect module registers itself with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from catalog.domain.checker import CharacterSet, Checker
from catalog.domain.descriptor import Descriptor

MAX_BASELINE_COUNT = 2**31 - 1
# Column widths (catalog/models): a longer value failed the insert on PostgreSQL, a 500 (SQLite does not
# enforce them). tests/catalog/services/test_import_fuzz.py checks that they agree with the models.
ID_MAX = 200  # tool ids, and so their canonical keys and LLM names
NAME_MAX = 200  # team names, on-call handles and channels; the source repository
SLUG_MAX = 100  # team, profile, floor and agent ids; modules, categories, policy domains; the source commit
PATH_MAX = 300  # metadataRef, source

# Bounds on what a manifest may hold (TOOLS.md, "Bounds"). Each is far above what the seeds' catalogs use (the
# largest in brackets: the demo catalogs and the 118 real MCP tools in ../shared/benchmarks) and low enough that
# no single value can make a process balloon: a 10 MB ragDescription once imported and killed the web process
# that embedded it.
DESCRIPTION_MAX = 8_000  # ragDescription, a TUCAN tool's description [2,781]
FRAGMENT_MAX = 2_000  # instructionFragment, stylingFragment, outputInstructions [136]
ESCALATION_MAX = 1_000  # a team's escalation text
KEYWORD_MAX = 100  # one ragKeyword [35]
KEYWORDS_MAX = 40  # ragKeywords per language (TUCAN: in all) [8]
KEYWORD_LANGUAGES_MAX = 16  # languages under ragKeywords [2]
LANGUAGE_CODE_MAX = 16  # a BCP 47 tag such as de or de-AT
ALIASES_MAX = 20  # aliases per tool [1]
SCHEMA_DEPTH_MAX = 16  # nesting of an inputSchema [8]
SCHEMA_BYTES_MAX = 65_536  # an inputSchema as compact JSON [1,633]
TOOLS_MAX = 100_000  # tools per manifest (the console is measured up to 50,000)
TEAMS_MAX = 1_000
OWNERSHIP_MAX = 10_000  # ownership rules
PROFILES_MAX = 100
FLOORS_MAX = 100  # forced floors
AGENTS_MAX = 500  # TUCAN agents [8]
LIST_IN_SECTION_MAX = 10_000  # a profile's include, a floor's tools, an agent's categories, availability

# The characters of a tool id or alias: what the seeds' spellings use (camelCase, snake_case, kebab-case,
# dotted) and MCP's tool-name alphabet, never starting with punctuation. It keeps markup, newlines, path
# segments and spreadsheet formulas (`=`, `+`, `-`, `@` first) out of every page, log line and export.
TOOL_ID_CHARS = CharacterSet(
    r"[A-Za-z0-9_][A-Za-z0-9_.\-]*", "may contain only letters A-Z, digits and _ . - (and not start with . or -)"
)
# Team, profile, floor and agent ids, modules, categories and policy domains.
SLUG_CHARS = CharacterSet(
    r"[A-Za-z0-9][A-Za-z0-9_.\-]*", "may contain only letters A-Z, digits and _ . - (and start with a letter or digit)"
)


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
    # `mcp-tools/v1` only: {"server": identity, "governance": the overlay section as given or None, "tools": the
    # tools/list result as given}.
    mcp: dict[str, Any] | None = None


# What a refusal lists (TOOLS.md, "Bounds"): every problem of 1.8 MB of bad tools was once a 38.7 MB answer (the API's
# 422, an import job's stored `errors`, the command's output). The first problems, each cut to a length, then one
# line counting the rest: whoever fixes the source repository fixes these, and the next import lists what is left.
PROBLEMS_LISTED_MAX = 1_000
PROBLEM_CHARS_MAX = 1_000  # a location may quote a long key: keep its start (where) and its end (what to do)


class ManifestError(Exception):
    """A manifest that cannot be imported; `problems` lists every located problem, `listed()` what an answer shows."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(f"{len(problems)} problem(s) in manifest: " + "; ".join(problems[:5]))

    def listed(self) -> list[str]:
        """The first PROBLEMS_LISTED_MAX problems, each at most about PROBLEM_CHARS_MAX characters, then, when there
        were more, a last line saying how many: an answer's size no longer grows with the manifest's."""
        shown = [_cut(problem) for problem in self.problems[:PROBLEMS_LISTED_MAX]]
        more = len(self.problems) - len(shown)
        if more:
            shown.append(f"… and {more:,} more problem(s): fix those listed and import again to see the rest")
        return shown


def _cut(problem: str) -> str:
    if len(problem) <= PROBLEM_CHARS_MAX:
        return problem
    head, tail = PROBLEM_CHARS_MAX * 3 // 4, PROBLEM_CHARS_MAX // 5
    return f"{problem[:head]} … ({len(problem) - head - tail:,} characters cut) … {problem[-tail:]}"


# A dialect fills the manifest from the decoded top-level object, recording each problem in the checker
# instead of raising: (data, manifest, checker, ids of the teams already stored).
ParseBody = Callable[[dict[str, Any], Manifest, Checker, set[str]], None]


@dataclass(frozen=True)
class Dialect:
    """One manifest format: its `format` string, the system its tools belong to, and its parser."""

    format: str
    system: str
    parse: ParseBody
