"""HITL tier floors: the minimum tier safety officers require of a mutating tool, by policy domain or by tool-id
pattern (TOOLS.md glossary, "tier floor"). Pure: the gate, the effective-policy API, the lint rule and the floors
page all decide with these functions.

A floor names either a policy domain (exact, lower-case, compared with the tool's approval domain) or an
fnmatch-style pattern (`*prescri*`, case-insensitive) matched against the tool's declared id, LLM name and
canonical key; it may be limited to one system. The gate applies max(declared tier, floor) with low < high.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from catalog.domain.vocabulary import HitlTier, system_problem

# Bounds of what a safety officer may type (the form, the service and the database all hold to them).
DOMAIN_MAX = 60
PATTERN_MAX = 100
REASON_MAX = 2000
# A pattern must name something: `*` or `*-*` would raise every mutating tool of both catalogs to high
# (every operator-chat write would suspend) through one typo.
PATTERN_MIN_LITERALS = 3

TIERS: tuple[str, ...] = (HitlTier.LOW.value, HitlTier.HIGH.value)  # in rising order
# What one safety officer may propose and a second must confirm: the weakenings of a floor.
REMOVE, LOWER = "remove", "lower"
PROPOSALS: tuple[str, ...] = (REMOVE, LOWER)
_RANK = {tier: rank for rank, tier in enumerate(TIERS)}
_DOMAIN_SHAPE = re.compile(r"[a-z0-9][a-z0-9._-]*")
# Ids are folded to lower case before matching, so a pattern is written in lower case too; `?`, `*` and
# `[...]`/`[!...]` are fnmatch's wildcards.
_PATTERN_SHAPE = re.compile(r"[a-z0-9._\-*?\[\]!]+")


@dataclass(frozen=True)
class Floor:
    """One floor as plain values. `id` is its readable key (`domain:medication`, `pattern:*prescri*@tucan`),
    what findings, the policy API and the gate name; `pk` is its row on the console (0 before it is stored)."""

    id: str
    min_tier: str
    policy_domain: str | None = None
    pattern: str | None = None
    system: str | None = None
    reason: str = ""
    pk: int = 0


def floor_key(*, policy_domain: str | None, pattern: str | None, system: str | None) -> str:
    what = f"domain:{policy_domain}" if policy_domain else f"pattern:{pattern}"
    return f"{what}@{system}" if system else what


def approval_domain(*, policy_domain: str | None, category: str | None, module: str | None) -> str:
    """The approval domain: the declared policy domain; TUCAN tools declare none, so their category (a Condor
    tool without one falls back to its module)."""
    return policy_domain or category or module or ""


def floor_for(
    *,
    declared_id: str,
    llm_name: str,
    canonical_key: str,
    system: str,
    policy_domain: str | None,
    module: str,
    category: str,
    floors: Iterable[Floor],
) -> tuple[str | None, tuple[str, ...]]:
    """The highest floor that applies to a tool (None when none does), and the ids of every floor that matches
    it, in the order given. Callers apply it to mutating tools only (the mutating predicate)."""
    domain = approval_domain(policy_domain=policy_domain, category=category, module=module).lower()
    names = (declared_id.lower(), llm_name.lower(), canonical_key.lower())
    best: str | None = None
    matched: list[str] = []
    for f in floors:
        if _matches(f, system=system, domain=domain, names=names):
            matched.append(f.id)
            if best is None or _RANK[f.min_tier] > _RANK[best]:
                best = f.min_tier
    return best, tuple(matched)


def stricter_floor(*found: tuple[str | None, tuple[str, ...]]) -> tuple[str | None, tuple[str, ...]]:
    """The highest of several `floor_for` answers and every floor any of them matched (in order, once each).
    While a change of a floor's inputs (module, category, policy domain) awaits sign-off, a clinical profile is
    served the floors of what is in effect and of what is proposed: the strengthening part at once (fail closed)."""
    best: str | None = None
    matched: list[str] = []
    for tier, ids in found:
        if tier is not None and (best is None or _RANK[tier] > _RANK[best]):
            best = tier
        matched.extend(i for i in ids if i not in matched)
    return best, tuple(matched)


FloorInputs = tuple[str | None, str, str]  # (policy domain, module, category): what a floor's domain is derived from


def floor_for_inputs(
    *,
    declared_id: str,
    llm_name: str,
    canonical_key: str,
    system: str,
    inputs: Iterable[FloorInputs],
    floors: Iterable[Floor],
) -> tuple[str | None, tuple[str, ...]]:
    """`floor_for` of one tool over each of its inputs (the declaration served, and the one awaiting sign-off when its
    module, category or policy domain differ), the stricter (`stricter_floor`)."""
    floors = tuple(floors)
    return stricter_floor(
        *(
            floor_for(
                declared_id=declared_id,
                llm_name=llm_name,
                canonical_key=canonical_key,
                system=system,
                policy_domain=domain,
                module=module,
                category=category,
                floors=floors,
            )
            for domain, module, category in dict.fromkeys(inputs)
        )
    )


def _matches(f: Floor, *, system: str, domain: str, names: tuple[str, ...]) -> bool:
    if f.system and f.system != system:
        return False
    if f.policy_domain:
        return f.policy_domain == domain
    return bool(f.pattern) and any(fnmatchcase(n, f.pattern or "") for n in names)


def tier_with_floor(declared: str | None, floor: str | None) -> str | None:
    """max(declared, floor) with low < high; an undeclared tier with a floor gets the floor."""
    if floor is None:
        return declared
    if declared is None or _RANK.get(declared, -1) < _RANK[floor]:
        return floor
    return declared


def is_lower(tier: str, than: str) -> bool:
    """Whether `tier` is below `than` (a floor lowered to it weakens)."""
    return _RANK[tier] < _RANK[than]


def is_below(declared: str | None, floor: str | None) -> bool:
    """Whether a declaration falls short of its floor (a missing tier falls short of any floor)."""
    return floor is not None and tier_with_floor(declared, floor) != declared


# --- what a safety officer types -------------------------------------------------------------------------


def normalized_domain(raw: str) -> str:
    return (raw or "").strip().lower()


def normalized_pattern(raw: str) -> str:
    return (raw or "").strip().lower()


def domain_problem(domain: str) -> str | None:
    """Why a (normalized) policy domain cannot be a floor's, or None."""
    if len(domain) > DOMAIN_MAX:
        return f"at most {DOMAIN_MAX} characters (this one has {len(domain)})"
    if not _DOMAIN_SHAPE.fullmatch(domain):
        return "lower-case letters, digits, '.', '_' or '-', as the manifests spell it (e.g. medication)"
    return None


def pattern_problem(pattern: str) -> str | None:
    """Why a (normalized) tool-id pattern cannot be a floor's, or None."""
    if len(pattern) > PATTERN_MAX:
        return f"at most {PATTERN_MAX} characters (this one has {len(pattern)})"
    if not _PATTERN_SHAPE.fullmatch(pattern):
        return "letters, digits, '.', '_', '-' and the wildcards * ? [...] only (e.g. *prescri*)"
    if pattern.count("[") != pattern.count("]") or re.search(r"\[[^\]]*\[", pattern):
        return "every '[' needs its own ']' (e.g. sign[-_.]*)"
    if sum(ch.isalnum() for ch in pattern) < PATTERN_MIN_LITERALS:
        return f"name at least {PATTERN_MIN_LITERALS} letters or digits: a floor for every tool is one typo away"
    return None


def floor_problems(*, policy_domain: str, pattern: str, system: str, min_tier: str, reason: str) -> dict[str, str]:
    """Every problem of a new floor's (normalized) fields, by field name; empty when it may be stored."""
    problems: dict[str, str] = {}
    if policy_domain and pattern:
        problems["pattern"] = "a floor matches by policy domain or by tool-id pattern, not both: clear one"
    elif not policy_domain and not pattern:
        problems["policy_domain"] = "give a policy domain (e.g. medication) or a tool-id pattern (e.g. *prescri*)"
    elif policy_domain and (problem := domain_problem(policy_domain)):
        problems["policy_domain"] = problem
    elif pattern and (problem := pattern_problem(pattern)):
        problems["pattern"] = problem
    if system and (problem := system_problem(system)):
        problems["system"] = f"{problem}, or empty for every system"
    problems.update(change_problems(min_tier=min_tier, reason=reason))
    return problems


def change_problems(*, min_tier: str, reason: str) -> dict[str, str]:
    """Problems of a floor's tier and reason (what a change may touch)."""
    problems: dict[str, str] = {}
    if min_tier not in _RANK:
        problems["min_tier"] = f"one of {', '.join(TIERS)}"
    problems.update(reason_problems(reason, missing="write why tools that match need at least this tier"))
    return problems


def reason_problems(reason: str, *, missing: str) -> dict[str, str]:
    """A written reason is required (`missing` says what to write) and bounded."""
    if not reason.strip():
        return {"reason": missing}
    if len(reason) > REASON_MAX:
        return {"reason": f"at most {REASON_MAX} characters (this one has {len(reason)})"}
    return {}
