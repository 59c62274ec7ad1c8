"""The text rules: the shape and budgets of what the model reads (ragDescription, keywords, fragments, lines)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from catalog.domain.budget import (
    FRAGMENT_MAX_BYTES,
    MANIFEST_MAX_BYTES,
    MANIFEST_MIN_BYTES,
    RAG_HEADINGS,
    manifest_line_of,
    rag_heading,
    truncate_bytes,
    utf8_len,
)
from catalog.domain.colours import colour_literals
from catalog.domain.language import classify_keywords
from catalog.domain.manifest import UNDETERMINED_LANGUAGE
from catalog.domain.messages import N_, Message
from catalog.domain.rules.base import Finding, LintCatalog, Severity, _each, _finding, rule
from catalog.domain.vocabulary import Plane


@rule("styling-colour-literal", Severity.ERROR, N_("Raw colour literal in a styling fragment"), local=True)
def _styling_colour_literal(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        literals = colour_literals(d.styling_fragment or "")
        if literals:
            yield _finding(
                "styling-colour-literal",
                d,
                Message(
                    N_(
                        "stylingFragment carries raw colour literal(s) %(literals)s; use the card's theme tokens or "
                        "plain words."
                    ),
                    {"literals": ", ".join(repr(x) for x in literals)},
                ),
                literals=literals,
            )


RAG_SHAPE = RAG_HEADINGS


def rag_shape_problem(text: str) -> str | None:
    """None when `text` has the four-line USE WHEN / DO NOT USE WHEN / REQUIRES / PRODUCES shape (headings read by
    budget.rag_heading, the same reading the candidate manifest line uses: colon optional, any case)."""
    problem = rag_shape_message(text)
    return None if problem is None else problem.render()


def rag_shape_message(text: str) -> Message | None:
    """`rag_shape_problem` as a message to translate."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return Message(N_("ragDescription is missing"))
    if len(lines) != len(RAG_SHAPE):
        return Message(N_("ragDescription has %(n)s line(s), not the four-line shape"), {"n": len(lines)})
    for number, (line, heading) in enumerate(zip(lines, RAG_SHAPE, strict=True), start=1):
        found = rag_heading(line)
        params = {"number": number, "line": repr(line[:30]), "heading": repr(heading)}
        if found is None or found[0] != heading:
            return Message(N_("line %(number)s %(line)s should start with %(heading)s"), params)
        if not found[1]:
            return Message(N_("line %(number)s %(line)s says nothing after %(heading)s"), params)
    return None


@rule("rag-description-shape", Severity.WARNING, N_("ragDescription not in the four-line shape"), local=True)
def _rag_description_shape(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if d.mcp is not None:
            continue  # a Condor convention: an MCP server writes its own description (mcp-description-missing)
        problem = rag_shape_message(d.rag_description)
        if problem:
            yield _finding(
                "rag-description-shape",
                d,
                Message(
                    N_(
                        "%(problem)s. Write four lines: USE WHEN / DO NOT USE WHEN / REQUIRES / PRODUCES (tool-RAG "
                        "matches on it; a tool it never retrieves can never be selected)."
                    ),
                    {"problem": problem},
                ),
                problem=problem.render(),
            )


REQUIRED_KEYWORD_LANGUAGES = ("en", "de")


@rule("rag-keywords-languages", Severity.WARNING, N_("ragKeywords lack English or German"), local=True)
def _rag_keywords_languages(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if d.mcp is not None:
            continue  # MCP has no keywords to declare
        keywords = d.rag_keywords or {}
        detected = UNDETERMINED_LANGUAGE in keywords
        if detected:
            # TUCAN's flat list: detect each keyword's language and show the classification.
            by_language = classify_keywords(keywords[UNDETERMINED_LANGUAGE])
        else:
            by_language = {lang: list(words) for lang, words in keywords.items()}
        missing = [lang for lang in REQUIRED_KEYWORD_LANGUAGES if not by_language.get(lang)]
        if missing:
            how: Message | str = Message(N_(" (languages detected per keyword)")) if detected else ""
            yield _finding(
                "rag-keywords-languages",
                d,
                Message(
                    N_(
                        "ragKeywords have no %(missing)s keyword%(how)s: the clinic is German-first and the "
                        "embedding space must match the operator's language. Add them."
                    ),
                    {"missing": _no_and_no(missing), "how": how},
                ),
                missing=missing,
                detected=detected,
                keywords=by_language,
            )


def _no_and_no(languages: list[str]) -> Message | str:
    """`en and no de`: the languages joined, the joint translated."""
    if len(languages) == 1:
        return languages[0]
    return Message(N_("%(first)s and no %(second)s"), {"first": languages[0], "second": languages[1]})


# "NEVER show UUIDs", "do not display UUIDs", "no UUIDs": a negation before the word UUID in one clause.
_FORBIDS_UUIDS = re.compile(r"\b(never|not|don't|no)\b[^.;]*\buuids?\b", re.IGNORECASE)


@rule("uuid-output-instruction", Severity.WARNING, N_("Output with ids does not forbid showing UUIDs"), local=True)
def _uuid_output_instruction(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if d.output_contains_ids and not _FORBIDS_UUIDS.search(d.output_instructions or ""):
            yield _finding(
                "uuid-output-instruction",
                d,
                Message(
                    N_(
                        "outputContainsIds is true but outputInstructions do not forbid showing UUIDs. "
                        "Add 'NEVER show UUIDs' (the review checklist's rule)."
                    )
                ),
                output_instructions=d.output_instructions,
            )


@rule("fragment-over-budget", Severity.WARNING, N_("Fragment over its byte budget"), local=True)
def _fragment_over_budget(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        for name, text in (("instructionFragment", d.instruction_fragment), ("stylingFragment", d.styling_fragment)):
            if text and utf8_len(text) > FRAGMENT_MAX_BYTES:
                truncated = truncate_bytes(text, FRAGMENT_MAX_BYTES)
                yield _finding(
                    "fragment-over-budget",
                    d,
                    Message(
                        N_(
                            "%(field)s is %(bytes)s UTF-8 bytes, over the %(budget)s-byte budget; it will be "
                            "truncated to %(truncated)s. Shorten it."
                        ),
                        {
                            "field": name,
                            "bytes": utf8_len(text),
                            "budget": FRAGMENT_MAX_BYTES,
                            "truncated": repr(truncated),
                        },
                    ),
                    field=name,
                    bytes=utf8_len(text),
                    truncated=truncated,
                )


@rule("manifest-line-bounds", Severity.WARNING, N_("Candidate manifest line out of bounds"), local=True)
def _manifest_line_bounds(catalog: LintCatalog) -> Iterator[Finding]:
    for d, _ in _each(catalog):
        if d.plane != Plane.BUSINESS or d.mcp is not None:
            # Only business tools are ever candidates. An MCP tool's line is its server's whole description,
            # which the console cannot edit and clients show uncut: on the 118 real tools the bounds fired on 96
            # (79 under, 17 over; bench/mcp_findings.py), and a thin description is mcp-description-missing's.
            continue
        line = manifest_line_of(d)
        if not line.within_bounds:
            if line.bytes < MANIFEST_MIN_BYTES:
                size = line.bytes
                verdict = Message(N_("too short to be told apart (minimum %(min)s)"), {"min": MANIFEST_MIN_BYTES})
                fix = Message(N_("Say more in the USE WHEN, REQUIRES and PRODUCES lines."))
            else:
                size = line.required_bytes
                verdict = Message(
                    N_("over the %(max)s-byte budget with only its name, USE WHEN text and fragment"),
                    {"max": MANIFEST_MAX_BYTES},
                )
                fix = Message(N_("Shorten the USE WHEN line or the instructionFragment."))
            yield _finding(
                "manifest-line-bounds",
                d,
                Message(
                    N_("candidate manifest line is %(bytes)s bytes, %(verdict)s. %(fix)s"),
                    {"bytes": size, "verdict": verdict, "fix": fix},
                ),
                bytes=size,
                line=line.text,
            )
