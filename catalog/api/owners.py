"""GET /api/v1/owners/lookup?q= — the owner of any spelling of a tool id, for chat-ops bots."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router
from pydantic import BaseModel

from catalog.core.auth import ScopedBearer
from catalog.models import Tool
from catalog.selectors.owners import Lookup, owner_lookup

router = Router(tags=["owners"], auth=ScopedBearer("catalog:read"))


# Answers are built as dicts (lookup_body): plain pydantic models, as in approvals/api.py.


class TeamOut(BaseModel):
    id: str
    name: str
    oncall: str
    channel: str
    escalation: str


class OwnedToolOut(BaseModel):
    system: str
    id: str
    canonical_key: str
    llm_name: str
    matched_by: str | None = None
    similarity: float | None = None
    owner: TeamOut | None
    owner_rule: str | None


class LookupOut(BaseModel):
    query: str
    canonical_key: str
    found: bool
    matches: list[OwnedToolOut]
    did_you_mean: list[OwnedToolOut]


def _tool_out(tool: Tool, *, matched_by: str | None = None, similarity: float | None = None) -> dict[str, object]:
    owner = tool.owner
    rule = tool.owner_rule
    return {
        "system": tool.system,
        "id": tool.declared_id,
        "canonical_key": tool.canonical_key,
        "llm_name": tool.llm_name,
        "matched_by": matched_by,
        "similarity": round(similarity, 1) if similarity is not None else None,
        "owner": {
            "id": owner.slug,
            "name": owner.name,
            "oncall": owner.oncall,
            "channel": owner.channel,
            "escalation": owner.escalation,
        }
        if owner
        else None,
        "owner_rule": f"{rule.plane}/{rule.module}" if rule else None,
    }


def lookup_body(result: Lookup) -> dict[str, object]:
    return {
        "query": result.query,
        "canonical_key": result.key,
        "found": result.found,
        "matches": [_tool_out(t, matched_by=how) for t, how in result.matches],
        "did_you_mean": [_tool_out(t, similarity=score) for t, score in result.candidates],
    }


@router.get("/lookup", response=LookupOut, summary="Who owns a tool? Any spelling; near misses get candidates")
def lookup(request: HttpRequest, q: str = Query(..., min_length=1, max_length=200)) -> dict[str, object]:
    return lookup_body(owner_lookup(q))
