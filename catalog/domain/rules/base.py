"""What every safety rule stands on: the plain view of one catalog, findings, the registry and `lint`.

A rule has an id, a severity, whether a safety officer may waive it, and a check that yields findings
whose message says what is wrong and what to do. Rules register themselves with `@rule(...)` in the
modules of this package; `lint` runs every registered rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from catalog.domain.descriptor import Descriptor
from catalog.domain.floors import Floor
from catalog.domain.manifest import Agent, ForcedFloor, Profile
from catalog.domain.messages import Message


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class LintTool:
    descriptor: Descriptor
    owner: str | None  # the derived owning team's id, None when unowned


@dataclass(frozen=True)
class LintCatalog:
    """One system's live catalog as plain values: what every rule reads."""

    system: str
    tools: list[LintTool]
    profiles: list[Profile] = field(default_factory=list)
    forced_floors: list[ForcedFloor] = field(default_factory=list)
    agents: list[Agent] = field(default_factory=list)
    baseline_count: int | None = None
    # (a, b, cosine) of tools whose embedded texts are near-duplicates (catalog.rag.domain.siblings computes them
    # from stored vectors; empty until the worker has embedded the catalog).
    sibling_pairs: list[tuple[str, str, float]] = field(default_factory=list)
    # The safety officers' HITL tier floors (catalog.domain.floors), as the console stores them.
    tier_floors: tuple[Floor, ...] = ()
    # Every live tool of the other systems as (system, name) for each spelling a client may call it by
    # (declared id, LLM name, aliases): what an MCP server's tool may shadow (catalog.domain.rules.mcp).
    foreign_names: tuple[tuple[str, str], ...] = ()
    # When set, the tool-local rules (`Rule.local`) check only these declared ids: an import re-lints the tools it
    # changed and keeps the stored findings of the others (catalog.domain.rules.scope decides which ids). The
    # catalog-wide rules always read every tool (`lint` hands them the whole view).
    only_tools: frozenset[str] | None = None


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    tool_id: str | None  # None for catalog-wide findings (count-drift)
    message: str  # in English, as the API answers it
    details: dict[str, Any] = field(default_factory=dict)
    # The message's template and parameters (catalog.domain.messages), for a page to show it in the reader's language.
    text: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    title: str
    waivable: bool
    check: Callable[[LintCatalog], Iterable[Finding]]
    # Found in what the runtime reported it did (catalog.usage), not in declarations: `lint` never runs it, an
    # import never replaces its findings (TOOLS.md, "Runtime telemetry").
    runtime: bool = False
    # Tool-local: a tool's findings depend only on its own descriptor and owner (and the catalog's system), so an
    # unchanged tool's stored findings stay right. llm-text-manipulation also reads the catalog's names: its
    # scope adds the tools whose texts mention a name that came, went or moved (catalog.domain.rules.scope).
    local: bool = False


RULES: dict[str, Rule] = {}


def rule(
    rule_id: str, severity: Severity, title: str, *, waivable: bool = True, local: bool = False
) -> Callable[..., Any]:
    """Register a check. The id is what waivers, the API and `lint_catalog` name. `local`: see `Rule.local` (a
    local check reads the catalog's tools only through `_each`)."""

    def register(check: Callable[[LintCatalog], Iterable[Finding]]) -> Callable[[LintCatalog], Iterable[Finding]]:
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id!r} registered twice")
        RULES[rule_id] = Rule(rule_id, severity, title, waivable, check, local=local)
        return check

    return register


def runtime_rule(rule_id: str, severity: Severity, title: str, *, waivable: bool) -> None:
    """Register a rule whose findings come from telemetry (catalog.usage.domain.safety decides them)."""
    if rule_id in RULES:
        raise ValueError(f"rule {rule_id!r} registered twice")
    RULES[rule_id] = Rule(rule_id, severity, title, waivable, lambda catalog: (), runtime=True)


def declaration_rules() -> list[str]:
    """The rules an import lints: every rule but the runtime ones."""
    return [r.id for r in RULES.values() if not r.runtime]


def local_rules() -> list[str]:
    """The declaration rules whose findings are per tool (`Rule.local`)."""
    return [r.id for r in RULES.values() if r.local and not r.runtime]


def lint(catalog: LintCatalog, *, only: Iterable[str] | None = None) -> list[Finding]:
    """Every finding of every registered declaration rule (or of `only`), errors first, then by rule and tool.
    With `catalog.only_tools`, the local rules' findings are those of these tools only."""
    selected = [RULES[r] for r in only] if only is not None else [r for r in RULES.values() if not r.runtime]
    whole = replace(catalog, only_tools=None) if catalog.only_tools is not None else catalog
    findings = [f for r in selected for f in r.check(catalog if r.local else whole)]
    order = {Severity.ERROR.value: 0, Severity.WARNING.value: 1}
    return sorted(findings, key=lambda f: (order[f.severity], f.rule, f.tool_id or ""))


def _finding(r: str, tool: Descriptor | None, message: Message, **details: Any) -> Finding:
    spec = RULES[r]
    tool_id = tool.declared_id if tool else None
    return Finding(r, spec.severity.value, tool_id, message.render(), details, message.as_json())


def _each(catalog: LintCatalog) -> Iterator[tuple[Descriptor, str | None]]:
    only = catalog.only_tools
    for t in catalog.tools:
        if only is None or t.descriptor.declared_id in only:
            yield t.descriptor, t.owner
