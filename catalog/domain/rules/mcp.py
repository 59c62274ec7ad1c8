"""The MCP rules: what an MCP server's tools (`Descriptor.mcp` set, system `mcp:<server>`) must satisfy beyond
the rules every catalog gets.

An MCP server declares its tools itself and the console cannot edit them: each finding says what the server
should change, or what a catalog admin sets in the server's governance overlay, or when a safety officer may
waive it. Pure code over plain values; the verb reading is in `mcp_verbs.py`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from catalog.domain.descriptor import Descriptor
from catalog.domain.keys import canonical_key
from catalog.domain.mcp import client_spellings
from catalog.domain.messages import N_, Message
from catalog.domain.policy import is_mutating
from catalog.domain.rules.base import Finding, LintCatalog, Severity, _each, _finding, rule
from catalog.domain.rules.mcp_reading import declared_annotations as _declared_annotations
from catalog.domain.rules.mcp_verbs import description_verb, name_verb, property_verb, title_words
from catalog.domain.vocabulary import mcp_server_of

SCHEMA_MAX_DEPTH = 12  # input schemas nest a few levels; deeper nodes are not read (as the manipulation rule)
PATHS_SHOWN = 20  # schema paths kept in one finding's details
# Fewer words than this say less than a verb, an object and what qualifies it ("List Git branches", "Merge a pull
# request"), and the model picks an MCP tool by its name and this text alone (bench/mcp_findings.py: the shortest
# of the 118 real tools is "Switches branches").
DESCRIPTION_MIN_WORDS = 3
# What a schema node may carry instead of `type` and still say what a value is.
_TYPED_BY = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const")
_WORDS = re.compile(r"[^\W_]+")


def is_mcp(d: Descriptor) -> bool:
    return d.mcp is not None


# --- mcp-annotation-contradiction ---------------------------------------------------------------------------------


def _contradictions(d: Descriptor) -> list[dict[str, str]]:
    """Where a tool declared readOnlyHint true says otherwise: (field, verb or hint, excerpt) each."""
    declared = _declared_annotations(d)
    if declared.get("readOnlyHint") is not True:
        return []
    found: list[dict[str, str]] = []
    if declared.get("destructiveHint") is True:
        found.append({"field": "annotations.destructiveHint", "verb": "destructive", "excerpt": "true"})
    return found + write_signs(d)


def write_signs(d: Descriptor) -> list[dict[str, str]]:
    """Where an MCP tool's name, title, description or argument names say it writes, whatever it declares
    (mcp_verbs: a verb where it is a verb). bench/mcp_findings.py compares it with the declared hints."""
    declared = _declared_annotations(d)
    found: list[dict[str, str]] = []
    server_words = frozenset(canonical_key(str((d.mcp or {}).get("server", ""))).split("."))
    verb = name_verb(canonical_key(d.declared_id).split("."), server_words)
    if verb:
        found.append({"field": "name", "verb": verb, "excerpt": d.declared_id})
    for field, title in (("title", (d.mcp or {}).get("title")), ("annotations.title", declared.get("title"))):
        if isinstance(title, str) and (verb := name_verb(title_words(title))):
            found.append({"field": field, "verb": verb, "excerpt": title})
    said = description_verb(d.rag_description or "")
    if said:
        found.append({"field": "description", "verb": said[0], "excerpt": said[1]})
    for path, name in _property_names(d.input_schema):
        if verb := property_verb(canonical_key(name).split(".")):
            found.append({"field": path, "verb": verb, "excerpt": name})
    return found


@rule("mcp-annotation-contradiction", Severity.ERROR, N_("MCP tool declared read-only but says it writes"))
def _mcp_annotation_contradiction(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if not is_mcp(d):
            continue
        found = _contradictions(d)
        if not found:
            continue
        first = found[0]
        if first["field"] == "annotations.destructiveHint":
            what = Message(
                N_(
                    "also declares destructiveHint true, which MCP gives meaning only when a tool is not read-only: "
                    "the server contradicts itself"
                )
            )
        else:
            what = Message(
                N_("its %(field)s says it writes (%(verb)s in %(excerpt)s)"),
                {"field": first["field"], "verb": repr(first["verb"]), "excerpt": repr(first["excerpt"])},
            )
        more: Message | str = Message(N_(" and %(n)s more sign(s)"), {"n": len(found) - 1}) if len(found) > 1 else ""
        yield _finding(
            "mcp-annotation-contradiction",
            d,
            Message(
                N_(
                    "declares readOnlyHint true, but %(what)s%(more)s. The console believes the hint: a write marked "
                    "read-only runs with no HITL gate and may be retried. If it writes, have the server declare "
                    "readOnlyHint false; if it only reads, a safety officer waives this finding with that "
                    "justification."
                ),
                {"what": what, "more": more},
            ),
            signs=found,
        )


# --- mcp-shadowing ------------------------------------------------------------------------------------------------


def _exposed_keys(server: str, name: str, other_servers: set[str]) -> set[str]:
    """The canonical keys a client may expose this tool as (catalog.domain.mcp.client_spellings), and the name
    with a client prefix stripped that names another server (`mcp__github__create_issue`, `github_create_issue`
    on a server that is not github): what it may be mistaken for."""
    keys = {canonical_key(s) for s in client_spellings(server, name)}
    key = canonical_key(name)
    prefixes = [f"mcp.{canonical_key(o)}." for o in other_servers] + [f"{canonical_key(o)}." for o in other_servers]
    keys.update(key[len(p) :] for p in prefixes if key.startswith(p) and len(key) > len(p))
    if key.startswith("mcp.") and key.count(".") >= 2:
        keys.add(key.split(".", 2)[2])  # `mcp__<any server>__name`: Claude's spelling of some server's tool
    return keys


def _foreign_keys(foreign: tuple[tuple[str, str], ...]) -> dict[str, set[tuple[str, str]]]:
    """Canonical key → the (system, name) of other catalogs' tools a client may call by it (an MCP server's
    tools also under their client spellings)."""
    by_key: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for system, name in foreign:
        server = mcp_server_of(system)
        spellings = client_spellings(server, name) if server else (name,)
        for s in spellings:
            by_key[canonical_key(s)].add((system, name))
    return by_key


def _collisions(
    d: Descriptor, server: str, by_key: dict[str, set[tuple[str, str]]], others: set[str]
) -> list[dict[str, str]]:
    hits: dict[tuple[str, str], dict[str, str]] = {}
    for key in sorted(_exposed_keys(server, d.declared_id, others)):
        for system, name in sorted(by_key.get(key, ())):
            # One per foreign tool: its declared id, LLM name and aliases are spellings of one tool.
            hits.setdefault((system, canonical_key(name)), {"system": system, "tool": name, "key": key})
    return list(hits.values())


@rule("mcp-shadowing", Severity.ERROR, N_("MCP tool name collides with another catalog's tool"))
def _mcp_shadowing(catalog: LintCatalog) -> Iterator[Finding]:
    server = mcp_server_of(catalog.system)
    if server is None or not catalog.foreign_names:
        return
    by_key = _foreign_keys(catalog.foreign_names)
    others = {s for system, _ in catalog.foreign_names if (s := mcp_server_of(system)) and s != server}
    for d, _ in _each(catalog):
        if not is_mcp(d):
            continue
        found = _collisions(d, server, by_key, others)
        if not found:
            continue
        shown = ", ".join(f"{c['system']} {c['tool']!r}" for c in found[:5])
        more: Message | str = Message(N_(" and %(n)s more"), {"n": len(found) - 5}) if len(found) > 5 else ""
        yield _finding(
            "mcp-shadowing",
            d,
            Message(
                N_(
                    "%(tool)s folds, as MCP clients spell tool names, to the name of %(shown)s%(more)s. A client "
                    "connected to both exposes tools the model cannot tell apart, and a call meant for one may reach "
                    "the other (tool shadowing). Do not give one agent both, or, where the client prefixes every tool "
                    "with its server, a safety officer waives this finding with that justification."
                ),
                {"tool": repr(d.declared_id), "shown": shown, "more": more},
            ),
            collisions=found,
        )


# --- mcp-description-missing --------------------------------------------------------------------------------------


def _description_problem(d: Descriptor) -> Message | None:
    words = _WORDS.findall((d.rag_description or "").lower())
    if not words:
        return Message(N_("has no description"))
    if len(words) < DESCRIPTION_MIN_WORDS:
        return Message(
            N_("has a description of %(n)s word(s) (%(text)s)"),
            {"n": len(words), "text": repr(d.rag_description.strip())},
        )
    name_words = {w.rstrip("s") for w in canonical_key(d.declared_id).split(".")}
    if all(w.rstrip("s") in name_words for w in words):
        return Message(
            N_("has a description that only repeats its name (%(text)s)"), {"text": repr(d.rag_description.strip())}
        )
    return None


@rule("mcp-description-missing", Severity.WARNING, N_("MCP tool without a description worth the name"))
def _mcp_description_missing(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if not is_mcp(d):
            continue
        problem = _description_problem(d)
        if problem:
            yield _finding(
                "mcp-description-missing",
                d,
                Message(
                    N_(
                        "%(problem)s: the model chooses an MCP tool by its name and description alone, and tool-RAG "
                        "retrieves it by the description. Have the server describe what it does, to what, and what "
                        "it returns (at least %(min)s words)."
                    ),
                    {"problem": problem, "min": DESCRIPTION_MIN_WORDS},
                ),
                words=len(_WORDS.findall(d.rag_description or "")),
            )


# --- mcp-schema-loose ---------------------------------------------------------------------------------------------


def _property_names(schema: Any) -> list[tuple[str, str]]:
    """(path, name) of every property of an input schema, nested ones included (bounded depth)."""
    out: list[tuple[str, str]] = []
    _walk(schema, "inputSchema", 0, lambda path, name, node: out.append((path, name)))
    return out


def _untyped(schema: Any) -> list[str]:
    """Paths of the properties and array items that say nothing of what their value is."""
    out: list[str] = []

    def visit(path: str, _name: str, node: Any) -> None:
        if not isinstance(node, dict) or not any(k in node for k in _TYPED_BY):
            out.append(path)

    _walk(schema, "inputSchema", 0, visit)
    return out


def _walk(node: Any, path: str, depth: int, visit: Callable[[str, str, Any], None]) -> None:
    if depth > SCHEMA_MAX_DEPTH or not isinstance(node, dict):
        return
    props = node.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            visit(f"{path}.properties.{name}", name, sub)
            _walk(sub, f"{path}.properties.{name}", depth + 1, visit)
    items = node.get("items")
    if isinstance(items, dict):
        visit(f"{path}.items", "", items)
        _walk(items, f"{path}.items", depth + 1, visit)
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(node.get(key) or [] if isinstance(node.get(key), list) else []):
            _walk(sub, f"{path}.{key}[{i}]", depth + 1, visit)


def _writes(d: Descriptor) -> bool:
    """Whether an open schema matters: the tool declares it writes, or declares nothing and its name or text says
    it writes. An unannotated tool that reads (`maps_geocode`) already has mutate-without-hitl's error, whose fix
    (readOnlyHint true) settles this too; on the 118 tools, 22 of the 40 open schemas the MCP default alone flagged
    were such readers (bench/mcp_findings.py)."""
    if not is_mutating(mutating=d.mutating, policy_class=d.policy_class):
        return False
    return "readOnlyHint" in _declared_annotations(d) or bool(write_signs(d))


# How a loose schema's path is wrong: kept in English in the finding's details (the API), translated in its message.
_NO_TYPE = N_("no type")
_NOT_OBJECT = N_("is %(type)s, not 'object'")
_OPEN_ON_WRITE = N_("not false on a mutating tool: any argument passes")


def _loose_message(problem: dict[str, str]) -> Message:
    text = problem["problem"]
    if text in (_NO_TYPE, _OPEN_ON_WRITE):
        what = Message(text)
    else:  # _NOT_OBJECT, filled in: its type is what stands between "is " and the fixed tail
        what = Message(_NOT_OBJECT, {"type": text[len("is ") : -len(", not 'object'")]})
    return Message("%(path)s %(problem)s", {"path": problem["path"], "problem": what})


def _loose(d: Descriptor) -> list[dict[str, str]]:
    schema = d.input_schema if isinstance(d.input_schema, dict) else {}
    problems = [{"path": p, "problem": _NO_TYPE} for p in _untyped(schema)]  # on any tool: the model guesses
    if schema.get("type") != "object":
        problems.insert(0, {"path": "inputSchema.type", "problem": _NOT_OBJECT % {"type": repr(schema.get("type"))}})
    elif _writes(d) and schema.get("additionalProperties") is not False:
        problems.append({"path": "inputSchema.additionalProperties", "problem": _OPEN_ON_WRITE})
    return problems


@rule("mcp-schema-loose", Severity.WARNING, N_("MCP input schema leaves arguments open"))
def _mcp_schema_loose(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if not is_mcp(d):
            continue
        problems = _loose(d)
        if not problems:
            continue
        shown = {f"p{i}": _loose_message(p) for i, p in enumerate(problems[:3])}
        more: Message | str = Message(N_("; and %(n)s more"), {"n": len(problems) - 3}) if len(problems) > 3 else ""
        unannotated = "readOnlyHint" not in _declared_annotations(d)
        why: Message | str = (
            Message(N_(" (it declares no readOnlyHint and its name or description says it writes)"))
            if unannotated
            else ""
        )
        yield _finding(
            "mcp-schema-loose",
            d,
            Message(
                N_(
                    "input schema is loose%(why)s: %(shown)s%(more)s. The model may then send arguments the tool "
                    "never checks, and approvals show them unvalidated. Have the server type every property and, on "
                    "a tool that writes, set additionalProperties: false."
                ),
                {"why": why, "shown": Message("; ".join(f"%({k})s" for k in shown), shown), "more": more},
            ),
            paths=problems[:PATHS_SHOWN],
            total=len(problems),
        )
