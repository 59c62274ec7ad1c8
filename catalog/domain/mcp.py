"""MCP tools as the console governs them: annotations with MCP's own defaults, the axes they imply, the pin, and
the governance overlay a catalog admin lays over a server (owner, policy domain, HITL tier per name pattern).

Pure code over plain values. The `mcp` declared field of a descriptor (`Descriptor.mcp`) holds what the server
declared beyond the axes, exactly as declared:

    {"server": "time", "name": "get_current_time", "title": "Get time" | None,
     "outputSchema": {...} | None, "annotations": {"readOnlyHint": true, ...} | None}
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from catalog.domain.vocabulary import Idempotency, RetryClass

# MCP's ToolAnnotations (specification 2025-06-18 and later): each hint's default when the server omits it. The
# defaults are the cautious reading, so an unannotated tool counts as a mutating, destructive, open-world write.
HINT_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
HINTS: tuple[str, ...] = tuple(HINT_DEFAULTS)
ANNOTATION_KEYS: tuple[str, ...] = ("title", *HINTS)

# What a tool's pin covers: everything the model reads or the gate derives from. A change to any of it on
# re-import is a weakening change (catalog.domain.effect): not in effect for clinical profiles until signed off.
PIN_FIELDS: tuple[str, ...] = ("rag_description", "input_schema", "mcp")


def effective_hints(annotations: Mapping[str, Any] | None) -> dict[str, bool]:
    """Each hint as declared, MCP's default where it is missing (or not a boolean). `destructiveHint` and
    `idempotentHint` mean something only for a tool that is not read-only (the specification), so a read-only
    tool is neither destructive nor in need of idempotence."""
    given = annotations or {}
    hints = {
        name: given[name] if isinstance(given.get(name), bool) else default for name, default in HINT_DEFAULTS.items()
    }
    if hints["readOnlyHint"]:
        hints["destructiveHint"] = False
        hints["idempotentHint"] = True
    return hints


@dataclass(frozen=True)
class HintAxes:
    """The console's axes as an MCP tool's hints imply them (TOOLS.md, "Mapping")."""

    mutating: bool
    destructive: bool
    retry_class: str
    idempotency: str


def axes_from_hints(annotations: Mapping[str, Any] | None) -> HintAxes:
    """A tool mutates unless it says it is read-only, and only a tool that does not mutate may be retried (the one
    mutating predicate, catalog.domain.policy: an idempotent write is still never retried by the runtime, since a
    timed-out write that landed must not land twice). idempotentHint gives the idempotency."""
    hints = effective_hints(annotations)
    mutating = not hints["readOnlyHint"]
    idempotent = hints["idempotentHint"]
    return HintAxes(
        mutating=mutating,
        destructive=hints["destructiveHint"],
        retry_class=RetryClass.NONE.value if mutating else RetryClass.TRANSIENT.value,
        idempotency=Idempotency.NATURAL.value if idempotent else Idempotency.NONE.value,
    )


def pin_of(declared: Mapping[str, Any] | None) -> str:
    """SHA-256 of what the pin covers (name, description, schemas, annotations); "" for no declaration."""
    if declared is None or declared.get("mcp") is None:
        return ""
    payload = {name: declared.get(name) for name in PIN_FIELDS}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class OverlayRule:
    """One line of a server's overlay: tools whose name matches `match` (fnmatch, case-insensitive) get these;
    a field left None falls back to the server's default."""

    match: str
    policy_domain: str | None = None
    hitl_tier: str | None = None
    team: str | None = None


@dataclass(frozen=True)
class Overlay:
    """What a catalog admin declares for an MCP server, which declares no owner, domain or tier itself."""

    team: str | None = None
    policy_domain: str | None = None
    rules: tuple[OverlayRule, ...] = ()


@dataclass(frozen=True)
class OverlayMatch:
    module: str  # the rule's pattern that matched, else the server id: what ownership is derived by
    policy_domain: str | None
    hitl_tier: str | None


def overlay_for(name: str, server_id: str, overlay: Overlay) -> OverlayMatch:
    """The first rule whose pattern matches the tool's name decides; the server's defaults fill the rest. A tool
    no rule matches has the server id as module (owned by the server's team), the default domain and no tier."""
    for r in overlay.rules:
        if fnmatch.fnmatchcase(name.lower(), r.match.lower()):
            return OverlayMatch(
                module=r.match,
                policy_domain=r.policy_domain if r.policy_domain is not None else overlay.policy_domain,
                hitl_tier=r.hitl_tier,
            )
    return OverlayMatch(module=server_id, policy_domain=overlay.policy_domain, hitl_tier=None)


def overlay_as_json(overlay: Overlay) -> dict[str, Any]:
    """The overlay as the manifest's `governance` section spells it (TOOLS.md)."""
    return {
        "team": overlay.team,
        "policyDomain": overlay.policy_domain,
        "tools": [
            {
                key: value
                for key, value in (
                    ("match", r.match),
                    ("policyDomain", r.policy_domain),
                    ("hitlTier", r.hitl_tier),
                    ("team", r.team),
                )
                if value is not None
            }
            for r in overlay.rules
        ],
    }


def ownership_of(server_id: str, overlay: Overlay) -> list[tuple[str, str]]:
    """(module, team) ownership lines: the server's team for its own module, each rule's team for its pattern."""
    lines: list[tuple[str, str]] = []
    if overlay.team:
        lines.append((server_id, overlay.team))
    seen = {server_id}
    for r in overlay.rules:
        team = r.team or overlay.team
        if team and r.match not in seen:
            lines.append((r.match, team))
            seen.add(r.match)
    return lines


def declared_vs_effective(annotations: Mapping[str, Any] | None) -> list[tuple[str, Any, bool]]:
    """(hint, declared value or None, effective value) per hint, for the tool page."""
    given = annotations or {}
    effective = effective_hints(annotations)
    return [(name, given.get(name), effective[name]) for name in HINTS]


def client_spellings(server_id: str, name: str) -> Sequence[str]:
    """How MCP clients commonly expose a server's tool to the model: bare, `server_name`, `server__name`,
    `mcp__server__name` (Claude's form), `server.name` and `server/name`. Used by the approvals gate and the
    owner lookup to find an MCP tool by any of them."""
    return (
        name,
        f"{server_id}_{name}",
        f"{server_id}__{name}",
        f"mcp__{server_id}__{name}",
        f"{server_id}.{name}",
        f"{server_id}/{name}",
    )


# The console's overlay editor: one rule per line, `pattern [domain=…] [tier=high|low] [team=…]`.
_LINE_KEYS = {"domain": "policyDomain", "tier": "hitlTier", "team": "team"}
_RULE_LOCATION = re.compile(r"governance\.tools\[(?P<index>\d+)\](?P<rest>.*)", re.DOTALL)


def overlay_lines(governance: Mapping[str, Any] | None) -> str:
    """A governance section's rules as the editor's lines."""
    lines = []
    for r in (governance or {}).get("tools", []) or []:
        parts = [str(r.get("match", ""))]
        parts += [f"{short}={r[key]}" for short, key in _LINE_KEYS.items() if r.get(key)]
        lines.append(" ".join(parts))
    return "\n".join(lines)


def parse_overlay_lines(text: str, *, max_lines: int) -> tuple[list[dict[str, str]], list[str], list[int]]:
    """The editor's lines as the governance section's `tools`, each problem as "line N: …", and the editor line
    of each rule (blank lines and lines starting with # are skipped, so rule i is not always line i + 1). Values
    are checked again by the dialect on import."""
    rules: list[dict[str, str]] = []
    problems: list[str] = []
    numbered = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)]
    numbered = [(n, line) for n, line in numbered if line and not line.startswith("#")]
    if len(numbered) > max_lines:
        return [], [f"at most {max_lines} rules, got {len(numbered)}"], []
    for n, line in numbered:
        pattern, *options = line.split()
        rule = {"match": pattern}
        for option in options:
            short, sep, value = option.partition("=")
            if not sep or short not in _LINE_KEYS or not value:
                problems.append(f"line {n}: {option!r} is not domain=…, tier=high|low or team=…")
                continue
            rule[_LINE_KEYS[short]] = value
        rules.append(rule)
    return rules, problems, [n for n, _ in numbered]


def editor_problem(problem: str, lines: Sequence[int]) -> str:
    """A dialect problem of the governance section in the editor's words: `governance.tools[2].hitlTier: …` →
    `line 4: tier: …` (the editor line of rule 2, the key as the editor spells it)."""
    match = _RULE_LOCATION.match(problem)
    if match is None:
        return problem.removeprefix("governance.")
    index = int(match["index"])
    line = lines[index] if index < len(lines) else index + 1
    rest = match["rest"].lstrip(".: ")
    for short, key in _LINE_KEYS.items():
        if rest.startswith(key + ":"):
            rest = short + rest[len(key) :]
    return f"line {line}: {rest}"
