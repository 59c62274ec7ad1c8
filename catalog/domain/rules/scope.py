"""Which tools an import must lint again when it changed only some of them (the tool-local rules, `Rule.local`).

A local rule's findings for a tool depend on that tool's descriptor and owner alone, so the import re-lints the
tools it added, changed, revived or retired and keeps the stored findings of the others. llm-text-manipulation
also reads the catalog's names (a tool's text naming another tool is a shadowing sign): a name that came, went or
now names another tool can change the finding of any tool whose text mentions it, so those tools are linted
again too. A name can only matter to a text that contains it (every lookup is of a piece of the text), which one
regex over the changed names finds. Texts that are not ASCII are folded by the rule (NFKC, lookalikes) before
it reads them: they are linted again whenever a name changed (fail closed).

`lint_fingerprint` names the rules' code: stored findings made by other code are not kept (a full lint instead).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from catalog.domain.descriptor import Descriptor
from catalog.domain.keys import llm_name
from catalog.domain.rules.base import RULES
from catalog.domain.rules.manipulation import llm_texts

# What the rules read lives in catalog.domain (rules, budgets, keys, vocabulary, ...): its source is the
# fingerprint.
_DOMAIN = Path(__file__).resolve().parent.parent


@cache
def lint_fingerprint() -> str:
    """SHA-256 over the rule ids with their flags and the source of every module of catalog.domain: findings
    stored under another fingerprint were made by other rules (a deploy changed them) and are linted again."""
    digest = hashlib.sha256()
    for r in sorted(RULES.values(), key=lambda r: r.id):
        digest.update(f"{r.id}:{r.severity}:{r.local}:{r.runtime};".encode())
    for path in sorted(_DOMAIN.rglob("*.py")):
        digest.update(str(path.relative_to(_DOMAIN)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def tool_names(tools: Iterable[tuple[str, Iterable[str]]]) -> dict[str, set[str]]:
    """Every lower-cased name (declared id, LLM name, aliases) of (declared id, aliases), with the ids it names."""
    names: dict[str, set[str]] = defaultdict(set)
    for declared_id, aliases in tools:
        for name in (declared_id, llm_name(declared_id), *aliases):
            names[name.lower()].add(declared_id)
    return names


def moved_names(before: dict[str, set[str]], after: dict[str, set[str]]) -> set[str]:
    """Names whose tool may differ between the two catalogs: came, went, or named another tool. A name two tools
    share names the first in manifest order, which this does not know: such a name counts as moved."""
    moved = set(before.keys() ^ after.keys())
    for name, ids in after.items():
        old = before.get(name)
        if old is not None and (old != ids or len(ids) > 1):
            moved.add(name)
    return moved


def mentioning(tools: Iterable[Descriptor], names: set[str]) -> set[str]:
    """Declared ids of the tools whose LLM-facing texts contain one of `names` (lower-cased), or are not ASCII."""
    if not names:
        return set()
    found = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
    out: set[str] = set()
    for d in tools:
        text = "\n".join(t for _, t in llm_texts(d))
        if not text.isascii() or found.search(text.lower()):
            out.add(d.declared_id)
    return out
