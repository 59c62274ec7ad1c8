"""What the rule modules shared by every catalog read of an MCP tool (`Descriptor.mcp` set): why it counts as
mutating (for `mutate-without-hitl`) and the names of other catalogs' tools its text may shadow (for
`llm-text-manipulation`). Registers no rule, so importing it leaves the rules' order as it was; the MCP rules
themselves are in `mcp.py`.
"""

from __future__ import annotations

from typing import Any

from catalog.domain.descriptor import Descriptor
from catalog.domain.mcp import client_spellings, effective_hints
from catalog.domain.messages import N_, Message
from catalog.domain.rules.base import LintCatalog
from catalog.domain.vocabulary import mcp_server_of


def declared_annotations(d: Descriptor) -> dict[str, Any]:
    """The tool's MCP annotations exactly as declared ({} when none)."""
    return dict((d.mcp or {}).get("annotations") or {})


def mutation_reason(d: Descriptor) -> tuple[Message, dict[str, Any]]:
    """Why an MCP tool counts as mutating and what to do, for `mutate-without-hitl`'s message; its details."""
    declared = declared_annotations(d)
    destructive = effective_hints(declared)["destructiveHint"]
    declared_destructive = isinstance(declared.get("destructiveHint"), bool)
    if isinstance(declared.get("readOnlyHint"), bool):
        how = {
            (True, True): N_("destructive, declared"),
            (True, False): N_("destructive, by MCP's default"),
            (False, True): N_("not destructive, declared"),
            (False, False): N_("not destructive, by MCP's default"),
        }[(bool(destructive), declared_destructive)]
        why = Message(N_("readOnlyHint is false: the server declares it writes (%(how)s)"), {"how": Message(how)})
    elif destructive:
        why = Message(N_("no readOnlyHint: MCP's default reads an unannotated tool as a destructive write"))
    else:
        why = Message(N_("no readOnlyHint: MCP's default reads it as a write (declared not destructive)"))
    message = Message(
        N_(
            "%(why)s; no HITL tier is set: an ungated mutation. Set hitlTier 'high' (always suspends) or 'low' for "
            "it in the server's governance overlay (governance.tools: match %(tool)s), or, if it only reads, have "
            "the server declare readOnlyHint: true."
        ),
        {"why": why, "tool": repr(d.declared_id)},
    )
    return message, {"destructive": destructive, "read_only_hint": declared.get("readOnlyHint")}


def foreign_text_names(catalog: LintCatalog) -> dict[str, str]:
    """For the manipulation rule's shadowing signs: every spelling a client may call another catalog's tool by,
    lower-cased, mapped to how a finding names it (`send_email (mcp:mail)`). Empty for Condor and TUCAN."""
    names: dict[str, str] = {}
    for system, name in catalog.foreign_names:
        server = mcp_server_of(system)
        for s in client_spellings(server, name) if server else (name,):
            names.setdefault(s.lower(), f"{name} ({system})")
    return names
