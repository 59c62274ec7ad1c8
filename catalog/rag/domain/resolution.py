"""One resolution over an index: a prompt's vector and a profile → one immutable snapshot, in the seed's order.

1. candidates: business plane, plan-eligible under the profile, cosine of the prompt against current
   vectors, top-k above a minimum score (activation reason `rag-retrieved` with its score);
2. policy additions (forced floors whose trigger is set, then alwaysInclude tools) are prepended;
3. ids normalized to canonical registry keys, reasons moved with them, duplicates collapsed, unknown ids
   dropped and reported;
4. each candidate's manifest line (the shared byte-truncation routine) and the total bytes;
5. under a byte budget the ladder sheds from the tail; floors are shed last.

`why_not` then says, for any tool, which of these steps kept it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from catalog.domain.keys import canonical_key
from catalog.domain.messages import N_, Message
from catalog.domain.snapshot import Candidate, candidate_set_id, order_candidates, shed_to_budget
from catalog.domain.vocabulary import Plane
from catalog.rag.domain.hybrid import LEXICAL, PHRASE, WHOLE, RankingConfig
from catalog.rag.domain.index import MISSING, NO_TEXT, STALE, IndexedProfile, IndexedTool, SystemIndex
from catalog.rag.domain.lexical import words_missing
from catalog.rag.domain.ranking import Hit, LazyRanks, policy_additions, rag_hits, rank_prompt

POLICY_ONLY = "policy-only (no current vectors)"
TOOL_RAG = "tool-rag"


@dataclass(frozen=True)
class Request:
    """What the caller asked for, checked: `query` is the prompt's vector, None when there is nothing to rank
    (an empty prompt, or no current vectors in the system)."""

    system: str
    profile: IndexedProfile
    model_id: str
    query: np.ndarray | None
    attachments: bool
    multi_entity_intake: bool
    top_k: int
    min_score: float
    byte_budget: int | None
    prompt: str = ""  # as typed: what the lexical signal reads
    ranking: RankingConfig = field(default_factory=RankingConfig)


@dataclass
class Snapshot:
    candidate_set_id: str
    source: str
    model_id: str
    system: str
    profile: str
    catalog_revision: object
    tool_ids: list[str]
    candidates: list[Candidate]
    rag_descriptions: dict[str, str]
    activation_reasons: dict[str, list[str]]
    manifest_lines: dict[str, str]
    manifest_bytes: dict[str, int]
    total_bytes: int
    shed: list[Candidate] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)
    ranking: Sequence[Hit] = field(default_factory=list)  # the best eligible tools with a vector, by score
    ranks: LazyRanks | None = field(default=None, repr=False)  # any eligible tool's Hit, on demand
    top_k: int = 0
    min_score: float = 0.0
    byte_budget: int | None = None
    index: SystemIndex | None = field(default=None, repr=False)  # what the snapshot was resolved over (why-not)
    prompt: str = ""  # as typed: why-not names the words a tool lacks


def assemble_snapshot(index: SystemIndex, request: Request) -> Snapshot:
    """Steps 1 to 5 over the system's index."""
    eligibility, row_mask = index.eligibility(request.profile)
    ranking: Sequence[Hit] = []
    ranks: LazyRanks | None = None
    if request.query is not None and index.rows:
        ranking, ranks = rank_prompt(
            index, row_mask, request.query, request.prompt, top_k=request.top_k, config=request.ranking
        )
    ordered = order_candidates(
        policy_additions=policy_additions(
            index, attachments=request.attachments, multi_entity_intake=request.multi_entity_intake
        ),
        rag_hits=rag_hits(ranking, top_k=request.top_k, min_score=request.min_score),
        registry=index.registry,
        eligible=eligibility,
    )
    lines = {c.key: index.manifest_lines[c.key] for c in ordered.candidates}
    kept, shed = shed_to_budget(ordered.candidates, {k: v.bytes for k, v in lines.items()}, request.byte_budget)
    keys = [c.key for c in kept]
    return Snapshot(
        candidate_set_id=candidate_set_id(keys, [request.system, index.revision, request.model_id]),
        source=TOOL_RAG if index.rows else POLICY_ONLY,
        model_id=request.model_id,
        system=request.system,
        profile=request.profile.slug,
        catalog_revision=index.revision,
        tool_ids=keys,
        candidates=kept,
        rag_descriptions={c.key: index.by_key[c.key].rag_description for c in kept},
        activation_reasons={c.key: list(c.reasons) for c in kept},
        manifest_lines={k: lines[k].text for k in keys},
        manifest_bytes={k: lines[k].bytes for k in keys},
        total_bytes=sum(lines[k].bytes for k in keys),
        shed=shed,
        dropped=[{"toolId": d.tool_id, "reason": d.reason} for d in ordered.dropped],
        ranking=ranking,
        ranks=ranks,
        top_k=request.top_k,
        min_score=request.min_score,
        byte_budget=request.byte_budget,
        index=index,
        prompt=request.prompt,
    )


_CANNOT_RETRIEVE = {
    MISSING: N_("it has no vector yet (the worker has not embedded it)"),
    STALE: N_("its vector is stale (its text changed since it was embedded)"),
    NO_TEXT: N_("it has no ragDescription or ragKeywords to embed"),
}


def why_not(snapshot: Snapshot, expected: str) -> str:
    """Which filter kept `expected` out of the snapshot (or where it is in it), in one English sentence (the API's
    `whyNot`); `why_not_message` is the same sentence for a page to translate."""
    return why_not_message(snapshot, expected).render()


def why_not_message(snapshot: Snapshot, expected: str) -> Message:
    """`why_not` as a message (catalog.domain.messages)."""
    key = canonical_key(expected)
    if key in snapshot.tool_ids:
        hit = snapshot.ranks.get(key) if snapshot.ranks is not None else None
        return Message(
            N_("%(tool)s is in the set at position %(position)s (%(reasons)s%(signals)s)."),
            {
                "tool": expected,
                "position": snapshot.tool_ids.index(key) + 1,
                "reasons": ", ".join(snapshot.activation_reasons[key]),
                "signals": Message("; %(s)s", {"s": signal_summary_message(hit)}) if hit is not None else "",
            },
        )
    if any(c.key == key for c in snapshot.shed):
        return Message(
            N_("%(tool)s was retrieved but shed by the byte budget (%(budget)s bytes) from the tail."),
            {"tool": expected, "budget": snapshot.byte_budget},
        )
    tool = snapshot.index.by_key.get(key) if snapshot.index else None
    if tool is None:
        return Message(
            N_("%(tool)s is not a live %(system)s tool (unknown id, or retired)."),
            {"tool": expected, "system": snapshot.system},
        )
    if tool.plane != Plane.BUSINESS.value:
        return Message(
            N_("%(tool)s is on the %(plane)s plane: only business tools are candidates."),
            {"tool": tool.declared_id, "plane": tool.plane},
        )
    hit = snapshot.ranks.get(key) if snapshot.ranks is not None else None
    if hit is None:
        return _not_ranked(snapshot, tool)
    params = {"tool": tool.declared_id, "rank": hit.rank, "signals": signal_summary_message(hit)}
    if hit.rank > snapshot.top_k:
        return Message(
            N_("%(tool)s ranked %(rank)s, below the top %(top_k)s (%(signals)s): %(advice)s"),
            {**params, "top_k": snapshot.top_k, "advice": advice_message(hit, _missing(snapshot, tool))},
        )
    return Message(
        N_("%(tool)s ranked %(rank)s but its best cosine %(cosine)s is below the minimum %(min)s (%(signals)s)."),
        {**params, "cosine": f"{hit.relevance:.3f}", "min": f"{snapshot.min_score:.2f}"},
    )


SIGNAL_LABELS = {WHOLE: N_("whole text"), PHRASE: N_("best phrase"), LEXICAL: N_("shared words")}


def signal_summary(hit: Hit) -> str:
    """Each signal's score and rank, e.g. `whole text 0.412 #12, best phrase 0.530 #3, shared words 0.000 #40`."""
    return signal_summary_message(hit).render()


def signal_summary_message(hit: Hit) -> Message:
    parts: dict[str, Message] = {}
    for name, label in SIGNAL_LABELS.items():
        signal = hit.signals[name]
        score: Message | str = Message(N_("none")) if signal.score is None else f"{signal.score:.3f}"
        parts[name] = Message(
            "%(label)s %(score)s #%(rank)s", {"label": Message(label), "score": score, "rank": signal.rank}
        )
    return Message(", ".join(f"%({n})s" for n in parts), parts)


# A signal that ranks the tool this far down is the one to work on.
_WEAK_RANK = 10


def advice(hit: Hit, missing: list[str] | None = None) -> str:
    """What a catalog author can add, by which signal ranks the tool lowest; `missing`: the prompt's words the
    tool's text lacks."""
    return advice_message(hit, missing).render()


def advice_message(hit: Hit, missing: list[str] | None = None) -> Message:
    lexical, phrase = hit.signals[LEXICAL], hit.signals[PHRASE]
    if lexical.rank > _WEAK_RANK and (lexical.score or 0) < 0.05:
        words = f" ({', '.join(missing)})" if missing else ""
        return Message(
            N_("the prompt shares no words with it: add the prompt's own words%(words)s to its ragKeywords."),
            {"words": words},
        )
    if phrase.rank > _WEAK_RANK:
        return Message(
            N_("no keyword or sentence of it means what the prompt asks: add a keyword phrased like the prompt.")
        )
    return Message(N_("other tools match better on every signal: sharpen its USE WHEN and DO NOT USE WHEN lines."))


def _missing(snapshot: Snapshot, tool: IndexedTool) -> list[str]:
    if snapshot.index is None or tool.row is None or not snapshot.prompt:
        return []
    return words_missing(snapshot.prompt, snapshot.index.lexical, tool.row)


def _not_ranked(snapshot: Snapshot, tool: IndexedTool) -> Message:
    """A business tool with no rank under this prompt: it has no current vector, or the profile excludes it."""
    detail = _CANNOT_RETRIEVE.get(tool.vector_state)
    if detail is not None:
        return Message(
            N_("%(tool)s cannot be retrieved: %(detail)s."), {"tool": tool.declared_id, "detail": Message(detail)}
        )
    return Message(
        N_("%(tool)s is not plan-eligible under the profile %(profile)s (%(availability)s)."),
        {"tool": tool.declared_id, "profile": snapshot.profile, "availability": tool.availability},
    )
