"""The safety rules: each a small pure function over a plain view of one system's catalog.

Importing this package registers every rule: each module of it adds its checks to `RULES` with
`@rule(...)`. A new rule goes in the module of its kind (or a new module imported here).
"""

from __future__ import annotations

# `mcp` last: its rules list after the rules every catalog gets.
from catalog.domain.rules import declarations, floors, manipulation, text  # isort: split

from catalog.domain.rules import mcp, runtime
from catalog.domain.rules.base import (
    RULES,
    Finding,
    LintCatalog,
    LintTool,
    Rule,
    Severity,
    declaration_rules,
    lint,
    local_rules,
    rule,
)
from catalog.domain.rules.text import RAG_SHAPE, REQUIRED_KEYWORD_LANGUAGES, rag_shape_problem

# The seed's two hard rules: no waiver may ever silence them (the database refuses one too). Computed after
# every rule module above has registered its rules.
UNWAIVABLE_RULES: tuple[str, ...] = tuple(r.id for r in RULES.values() if not r.waivable)

__all__ = [
    "RAG_SHAPE",
    "REQUIRED_KEYWORD_LANGUAGES",
    "RULES",
    "UNWAIVABLE_RULES",
    "Finding",
    "LintCatalog",
    "LintTool",
    "Rule",
    "Severity",
    "declarations",
    "floors",
    "lint",
    "manipulation",
    "mcp",
    "rag_shape_problem",
    "rule",
    "runtime",
    "declaration_rules",
    "local_rules",
    "text",
]
