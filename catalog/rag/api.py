"""POST /api/v1/rag/resolve — the runtime's one resolution entry point: prompt + profile → snapshot."""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Router, Status
from pydantic import BaseModel, ConfigDict

from catalog.core.api_errors import ErrorOut
from catalog.core.api_input import ApiInput
from catalog.core.auth import ScopedBearer
from catalog.domain.vocabulary import SYSTEM_MAX
from catalog.rag.domain.resolution import Snapshot, why_not
from catalog.rag.embedders import EmbedderError
from catalog.rag.selectors.resolution import SnapshotRefused, snapshot_resolve
from catalog.rag.services.candidate_sets import candidate_set_record

router = Router(tags=["rag"], auth=ScopedBearer("rag"))


class ResolveIn(ApiInput):
    # Strict: a JSON `true` is not a byte budget, nor `1` a yes (lax parsing took them as 1 and True).
    model_config = ConfigDict(strict=True)

    prompt: str = Field(min_length=1, max_length=4000, description="the user's turn, as typed")
    profile: str = Field(min_length=1, max_length=100, description="the catalog profile of the run")
    attachments: bool = Field(False, description="the turn carries files (the attachments floor)")
    multiEntityIntake: bool = Field(False, description="a multi-entity clinical intake (the intake floor)")  # noqa: N815
    topK: int | None = Field(  # noqa: N815
        None, ge=1, le=settings.CONDOR_RAG_MAX_TOP_K, description="RAG hits to keep (default from settings)"
    )
    byteBudget: int | None = Field(None, ge=0, le=1_000_000, description="bytes of candidate manifest lines")  # noqa: N815
    system: str | None = Field(
        None,
        max_length=SYSTEM_MAX,
        description="condor, tucan or mcp:<server id>; default: the profile's system",
    )
    whyNot: list[Annotated[str, Field(max_length=200)]] = Field(  # noqa: N815
        default_factory=list, max_length=20, description="tool ids to explain"
    )


# Answers are built as dicts: plain pydantic models, not ninja's Schema (whose attribute resolver for ORM objects
# only adds CPU here), as in approvals/api.py.


class SignalOut(BaseModel):
    score: float | None  # None: the tool has nothing this signal scores (no phrases)
    rank: int


class CandidateOut(BaseModel):
    toolId: str  # noqa: N815
    declaredId: str  # noqa: N815
    activationReasons: list[str]  # noqa: N815
    score: float | None  # the fused score of the ranking (None for a policy addition the ranking did not reach)
    rank: int | None
    # Each signal's score and rank alone: whole (text cosine), phrase (best keyword or sentence), lexical (shared
    # character n-grams); None when the tool was not ranked.
    signals: dict[str, SignalOut] | None
    manifestLine: str  # noqa: N815
    manifestBytes: int  # noqa: N815


class ShedOut(BaseModel):
    toolId: str  # noqa: N815
    activationReasons: list[str]  # noqa: N815
    rank: int | None


class DroppedOut(BaseModel):
    toolId: str  # noqa: N815
    reason: str


class ResolveOut(BaseModel):
    candidateSetId: str  # noqa: N815
    source: str
    model: str
    system: str
    profile: str
    toolIds: list[str]  # noqa: N815
    ragDescriptions: dict[str, str]  # noqa: N815
    activationReasons: dict[str, list[str]]  # noqa: N815
    candidates: list[CandidateOut]
    totalBytes: int  # noqa: N815
    byteBudget: int | None  # noqa: N815
    shed: list[ShedOut]
    dropped: list[DroppedOut]
    whyNot: dict[str, str]  # noqa: N815


def _signals(snapshot: Snapshot, key: str) -> dict[str, dict[str, Any]] | None:
    hit = snapshot.ranks.get(key) if snapshot.ranks is not None else None
    if hit is None:
        return None
    return {name: {"score": signal.score, "rank": signal.rank} for name, signal in hit.signals.items()}


def snapshot_out(snapshot: Snapshot, explain: list[str]) -> dict[str, Any]:
    return {
        "candidateSetId": snapshot.candidate_set_id,
        "source": snapshot.source,
        "model": snapshot.model_id,
        "system": snapshot.system,
        "profile": snapshot.profile,
        "toolIds": snapshot.tool_ids,
        "ragDescriptions": snapshot.rag_descriptions,
        "activationReasons": snapshot.activation_reasons,
        "candidates": [
            {
                "toolId": c.key,
                "declaredId": c.declared_id,
                "activationReasons": c.reasons,
                "score": c.score,
                "rank": c.rank,
                "signals": _signals(snapshot, c.key),
                "manifestLine": snapshot.manifest_lines[c.key],
                "manifestBytes": snapshot.manifest_bytes[c.key],
            }
            for c in snapshot.candidates
        ],
        "totalBytes": snapshot.total_bytes,
        "byteBudget": snapshot.byte_budget,
        "shed": [{"toolId": c.key, "activationReasons": c.reasons, "rank": c.rank} for c in snapshot.shed],
        "dropped": snapshot.dropped,
        "whyNot": {tool: why_not(snapshot, tool) for tool in explain},
    }


# The function keeps the path's name: it is the OpenAPI operation id (catalog_rag_api_resolve) clients may use.
@router.post(
    "/resolve",
    response={200: ResolveOut, 422: ErrorOut, 503: ErrorOut},
    description="422 also for a profile or system without an imported catalog; 503 when the embedder is away.",
)
def resolve(request: HttpRequest, payload: ResolveIn) -> Any:
    try:
        snapshot = snapshot_resolve(
            prompt=payload.prompt,
            profile=payload.profile,
            attachments=payload.attachments,
            multi_entity_intake=payload.multiEntityIntake,
            top_k=payload.topK,
            byte_budget=payload.byteBudget,
            system=payload.system,
        )
    except SnapshotRefused as exc:
        return Status(422, {"detail": str(exc)})
    except EmbedderError as exc:
        return Status(503, {"detail": f"the embedder is unavailable: {exc}"})
    # Served: remembered, so the approvals gate and the telemetry ingest can check a call against this set.
    candidate_set_record(snapshot=snapshot)
    return snapshot_out(snapshot, payload.whyNot)
