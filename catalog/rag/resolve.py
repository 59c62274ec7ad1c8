"""Resolution: a prompt and a profile → one immutable candidate snapshot, in the seed's order.

1. candidates: business plane, plan-eligible under the profile, cosine of the prompt against current
   vectors, top-k above a minimum score (activation reason `rag-retrieved` with its score);
2. policy additions (forced floors whose trigger is set, then alwaysInclude tools) are prepended;
3. ids normalized to canonical registry keys, reasons moved with them, duplicates collapsed, unknown ids
   dropped and reported;
4. each candidate's manifest line (the shared byte-truncation routine) and the total bytes;
5. under a byte budget the ladder sheds from the tail; floors are shed last.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Max

from catalog.core.cache import catalog_version
from catalog.domain.budget import ManifestLine, manifest_line_of
from catalog.domain.keys import canonical_key
from catalog.domain.profiles import is_plan_eligible
from catalog.domain.snapshot import (
    ALWAYS_INCLUDE,
    FORCED_FLOOR,
    RAG_RETRIEVED,
    Candidate,
    Proposed,
    candidate_set_id,
    order_candidates,
    shed_to_budget,
)
from catalog.domain.vocabulary import FloorTrigger, Plane
from catalog.models import CatalogProfile, ForcedFloor, Tool, ToolEmbedding
from catalog.rag.embedders import Embedder, get_embedder


class ResolveError(Exception):
    """A request the caller must fix (unknown profile or system, bad top-k)."""


@dataclass(frozen=True)
class IndexedTool:
    pk: int
    system: str
    declared_id: str
    key: str
    plane: str
    availability: str
    always_include: bool
    rag_description: str
    description: str
    instruction_fragment: str | None
    input_schema: dict[str, Any] | None
    has_text: bool
    row: int | None  # row in the system's vector matrix; None when missing or stale
    vector_state: str  # current | stale | missing | no-text


@dataclass
class SystemIndex:
    tools: list[IndexedTool]
    by_key: dict[str, IndexedTool]
    matrix: np.ndarray  # current vectors only, rows in `rows` order
    rows: list[IndexedTool]
    floors: list[tuple[str, str, list[str]]]  # (slug, trigger, tool ids)
    revision: object
    _eligible: dict[str, tuple[dict[str, bool], np.ndarray]] = field(default_factory=dict)

    @cached_property
    def registry(self) -> dict[str, str]:
        """Canonical key → declared id, for ordering candidates."""
        return {t.key: t.declared_id for t in self.tools}

    @cached_property
    def always_included(self) -> list[str]:
        return [t.declared_id for t in self.tools if t.always_include]

    @cached_property
    def manifest_lines(self) -> dict[str, ManifestLine]:
        """Each tool's manifest line by canonical key: it depends on the declaration only, so once per index."""
        return {t.key: manifest_line_of(t) for t in self.tools}

    def eligibility(self, profile: CatalogProfile) -> tuple[dict[str, bool], np.ndarray]:
        """Plan eligibility under a profile: per key, and as a mask over the vector rows (cached per profile)."""
        cached = self._eligible.get(profile.slug)
        if cached is None:
            by_key = {
                t.key: is_plan_eligible(
                    plane=t.plane,
                    availability=t.availability,
                    declared_id=t.declared_id,
                    profile_availabilities=profile.availabilities,
                    profile_includes=profile.includes,
                )
                for t in self.tools
            }
            cached = (by_key, np.array([by_key[t.key] for t in self.rows], dtype=bool))
            self._eligible[profile.slug] = cached
        return cached


RANKING_HEAD = 50


class _LazyRanks:
    """Rank and score of any tool under one prompt, computed only when asked (the playground's why-not)."""

    def __init__(self, index: SystemIndex, scores: np.ndarray) -> None:
        self.index, self.scores = index, scores

    def get(self, key: str) -> Hit | None:
        tool = self.index.by_key.get(key)
        if tool is None or tool.row is None or self.scores[tool.row] == -np.inf:
            return None
        score = self.scores[tool.row]
        return Hit(tool, round(float(score), 4), int(np.count_nonzero(self.scores > score)) + 1)


@dataclass
class RagIndex:
    version: tuple[object, ...]
    model_id: str
    systems: dict[str, SystemIndex]
    profiles: dict[str, CatalogProfile]


_lock = threading.Lock()
_cached: RagIndex | None = None


def _vectors_version(model_id: str) -> tuple[object, ...]:
    """The newest vector of the model (time and id): asked on every resolve, one aggregate over an index."""
    found = ToolEmbedding.objects.filter(model_id=model_id).aggregate(last=Max("embedded_at"), top=Max("pk"))
    return (found["last"], found["top"])


def rag_index(model_id: str) -> RagIndex:
    """The live catalog with its current vectors, rebuilt when the catalog or the vectors change (two small
    queries to check; a rebuild reads every live tool and vector once)."""
    global _cached
    version = (catalog_version(), model_id, _vectors_version(model_id))
    index = _cached
    if index is not None and index.version == version:
        return index
    with _lock:
        if _cached is not None and _cached.version == version:
            return _cached
        _cached = _build(version, model_id)
        return _cached


def _build(version: tuple[object, ...], model_id: str) -> RagIndex:
    vectors = {
        tool_id: (sha, bytes(vec))
        for tool_id, sha, vec in ToolEmbedding.objects.filter(model_id=model_id, tool__retired_in__isnull=True)
        .values_list("tool_id", "text_sha256", "vector")
        .iterator(chunk_size=2000)
    }
    systems: dict[str, SystemIndex] = {}
    grouped: dict[str, list[Tool]] = {}
    for tool in Tool.objects.live().select_related("last_changed_revision").order_by("system", "declared_id"):
        grouped.setdefault(tool.system, []).append(tool)
    floors: dict[str, list[tuple[str, str, list[str]]]] = {}
    for floor in ForcedFloor.objects.order_by("system", "slug"):
        floors.setdefault(floor.system, []).append((floor.slug, floor.trigger, list(floor.tool_ids)))
    revisions = dict((s, r) for s, r, _ in catalog_version())
    for system, tools in grouped.items():
        indexed: list[IndexedTool] = []
        rows: list[IndexedTool] = []
        arrays: list[np.ndarray] = []
        for t in tools:
            stored = vectors.get(t.pk)
            if not t.rag_text_sha256:
                state = "no-text"
            elif stored is None:
                state = "missing"
            elif stored[0] != t.rag_text_sha256:
                state = "stale"
            else:
                state = "current"
            item = IndexedTool(
                pk=t.pk,
                system=system,
                declared_id=t.declared_id,
                key=t.canonical_key,
                plane=t.plane,
                availability=t.availability,
                always_include=t.always_include,
                rag_description=t.rag_description,
                description=t.description,
                instruction_fragment=t.instruction_fragment,
                input_schema=t.input_schema,
                has_text=bool(t.rag_text_sha256),
                row=len(rows) if state == "current" else None,
                vector_state=state,
            )
            indexed.append(item)
            if state == "current" and stored is not None:
                rows.append(item)
                arrays.append(np.frombuffer(stored[1], dtype="<f4"))
        matrix = np.vstack(arrays) if arrays else np.zeros((0, 1), dtype=np.float32)
        systems[system] = SystemIndex(
            tools=indexed,
            by_key={t.key: t for t in indexed},
            matrix=matrix,
            rows=rows,
            floors=floors.get(system, []),
            revision=revisions.get(system),
        )
    profiles = {p.slug: p for p in CatalogProfile.objects.all()}
    return RagIndex(version, model_id, systems, profiles)


@dataclass(frozen=True)
class Hit:
    tool: IndexedTool
    score: float
    rank: int  # among eligible tools with a current vector (1 = best)


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
    ranking: list[Hit] = field(default_factory=list)  # the best eligible tools with a vector, by score
    ranks: _LazyRanks | None = field(default=None, repr=False)  # any eligible tool's Hit, on demand
    top_k: int = 0
    min_score: float = 0.0
    byte_budget: int | None = None
    index: SystemIndex | None = field(default=None, repr=False)  # what the snapshot was resolved over (why-not)


def rag_resolve(
    *,
    prompt: str,
    profile: str,
    attachments: bool = False,
    multi_entity_intake: bool = False,
    top_k: int | None = None,
    byte_budget: int | None = None,
    system: str | None = None,
    embedder: Embedder | None = None,
    query_vector: np.ndarray | None = None,
) -> Snapshot:
    """`query_vector`: the prompt's vector when the caller embedded many prompts at once (the case set)."""
    embedder = embedder or get_embedder()
    top_k = settings.CONDOR_RAG_TOP_K if top_k is None else top_k
    if not 1 <= top_k <= settings.CONDOR_RAG_MAX_TOP_K:
        raise ResolveError(f"topK: {top_k} is out of range; choose 1..{settings.CONDOR_RAG_MAX_TOP_K}")
    if byte_budget is not None and byte_budget < 0:
        raise ResolveError(f"byteBudget: {byte_budget} must be 0 or more bytes")
    index = rag_index(embedder.model_id)
    profile_row = index.profiles.get(profile)
    if profile_row is None:
        known = ", ".join(sorted(index.profiles)) or "none"
        raise ResolveError(f"profile: {profile!r} is not a catalog profile (known: {known})")
    system = system or profile_row.system
    sys_index = index.systems.get(system)
    if sys_index is None:
        raise ResolveError(f"system: {system!r} has no imported catalog (known: {', '.join(sorted(index.systems))})")

    eligibility, row_mask = sys_index.eligibility(profile_row)
    ranking: list[Hit] = []
    ranks: _LazyRanks | None = None
    if sys_index.rows and prompt.strip():
        query = query_vector if query_vector is not None else embedder.embed([prompt])[0]
        scores = np.where(row_mask, sys_index.matrix @ query, -np.inf)
        # Only the head of the ranking is materialised; a tool further down gets its rank on demand (why-not).
        head = min(len(scores), max(RANKING_HEAD, top_k))
        order = np.argpartition(-scores, head - 1)[:head] if head < len(scores) else np.arange(len(scores))
        order = order[np.argsort(-scores[order], kind="stable")]
        for rank, row in enumerate(order.tolist(), start=1):
            if scores[row] == -np.inf:
                break
            ranking.append(Hit(sys_index.rows[row], round(float(scores[row]), 4), rank))
        ranks = _LazyRanks(sys_index, scores)
    min_score = settings.CONDOR_RAG_MIN_SCORE
    hits = [
        Proposed(h.tool.declared_id, RAG_RETRIEVED, h.score, h.rank) for h in ranking[:top_k] if h.score >= min_score
    ]
    triggers = {
        FloorTrigger.ATTACHMENTS.value: attachments,
        FloorTrigger.MULTI_ENTITY_INTAKE.value: multi_entity_intake,
    }
    additions = [
        Proposed(tool_id, f"{FORCED_FLOOR}:{slug}")
        for slug, trigger, tool_ids in sys_index.floors
        if triggers.get(trigger)
        for tool_id in tool_ids
    ]
    additions += [Proposed(tool_id, ALWAYS_INCLUDE) for tool_id in sys_index.always_included]
    ordered = order_candidates(
        policy_additions=additions, rag_hits=hits, registry=sys_index.registry, eligible=eligibility
    )
    lines = {c.key: sys_index.manifest_lines[c.key] for c in ordered.candidates}
    kept, shed = shed_to_budget(ordered.candidates, {k: v.bytes for k, v in lines.items()}, byte_budget)
    keys = [c.key for c in kept]
    return Snapshot(
        candidate_set_id=candidate_set_id(keys, [system, sys_index.revision, embedder.model_id]),
        source="tool-rag" if sys_index.rows else "policy-only (no current vectors)",
        model_id=embedder.model_id,
        system=system,
        profile=profile,
        catalog_revision=sys_index.revision,
        tool_ids=keys,
        candidates=kept,
        rag_descriptions={c.key: sys_index.by_key[c.key].rag_description for c in kept},
        activation_reasons={c.key: list(c.reasons) for c in kept},
        manifest_lines={k: lines[k].text for k in keys},
        manifest_bytes={k: lines[k].bytes for k in keys},
        total_bytes=sum(lines[k].bytes for k in keys),
        shed=shed,
        dropped=[{"toolId": d.tool_id, "reason": d.reason} for d in ordered.dropped],
        ranking=ranking,
        ranks=ranks,
        top_k=top_k,
        min_score=min_score,
        byte_budget=byte_budget,
        index=sys_index,
    )


def why_not(snapshot: Snapshot, expected: str) -> str:
    """Which filter kept `expected` out of the snapshot (or where it is in it), in one sentence."""
    key = canonical_key(expected)
    if key in snapshot.tool_ids:
        position = snapshot.tool_ids.index(key) + 1
        reasons = ", ".join(snapshot.activation_reasons[key])
        return f"{expected} is in the set at position {position} ({reasons})."
    shed = next((c for c in snapshot.shed if c.key == key), None)
    if shed is not None:
        return f"{expected} was retrieved but shed by the byte budget ({snapshot.byte_budget} bytes) from the tail."
    tool = snapshot.index.by_key.get(key) if snapshot.index else None
    if tool is None:
        return f"{expected} is not a live {snapshot.system} tool (unknown id, or retired)."
    if tool.plane != Plane.BUSINESS.value:
        return f"{tool.declared_id} is on the {tool.plane} plane: only business tools are candidates."
    hit = snapshot.ranks.get(key) if snapshot.ranks is not None else None
    if hit is None:
        if tool.vector_state in {"missing", "stale", "no-text"}:
            detail = {
                "missing": "it has no vector yet (the worker has not embedded it)",
                "stale": "its vector is stale (its text changed since it was embedded)",
                "no-text": "it has no ragDescription or ragKeywords to embed",
            }[tool.vector_state]
            return f"{tool.declared_id} cannot be retrieved: {detail}."
        return f"{tool.declared_id} is not plan-eligible under the profile {snapshot.profile} ({tool.availability})."
    if hit.rank > snapshot.top_k:
        return (
            f"{tool.declared_id} ranked {hit.rank} with score {hit.score:.3f}, below the top {snapshot.top_k}: "
            "harden its ragDescription / ragKeywords for prompts like this one."
        )
    return (
        f"{tool.declared_id} ranked {hit.rank} but its score {hit.score:.3f} is below the minimum "
        f"{snapshot.min_score:.2f}."
    )
