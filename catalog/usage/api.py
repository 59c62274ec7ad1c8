"""GET /api/v1/usage/unknown-names — the hallucinated-names board for services (token scope `catalog:read`): each
name the runtime called that is no catalog tool, with the closest real tool and who is on call for it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema

from catalog.core.auth import ScopedBearer
from catalog.usage.selectors.names import BoardRow, unknown_names_slice

router = Router(tags=["usage"], auth=ScopedBearer("catalog:read"))

# The largest page one call returns: ?limit=100000 gets this many (and says so), not a 422.
UNKNOWN_NAMES_MAX_LIMIT = 200


class UnknownNameToolOut(Schema):
    system: str
    toolId: str  # noqa: N815 - the API speaks camelCase, as the runtime does


class ClosestToolOut(Schema):
    system: str
    toolId: str  # noqa: N815
    score: float  # similarity 0..100 by the owner lookup's matching (100: an exact spelling)
    team: str | None  # the owning team's id
    oncall: str | None


class UnknownNameOut(Schema):
    name: str
    source: Literal["call", "ui"]  # a tool call, or a UI action the frontend dropped
    calls: int
    firstSeen: datetime  # noqa: N815
    lastSeen: datetime  # noqa: N815
    services: list[str]
    agents: list[str]
    verdict: Literal["open", "alias", "ignore"]
    aliasOf: UnknownNameToolOut | None  # noqa: N815
    closest: ClosestToolOut | None


class UnknownNamePage(Schema):
    count: int
    limit: int
    offset: int
    items: list[UnknownNameOut]


def _item(row: BoardRow) -> dict[str, object]:
    name, tool = row.name, row.closest
    alias = name.alias_of
    return {
        "name": name.name,
        "source": name.source,
        "calls": name.calls,
        "firstSeen": name.first_seen,
        "lastSeen": name.last_seen,
        "services": list(name.services or []),
        "agents": list(name.agents or []),
        "verdict": row.verdict,
        "aliasOf": {"system": alias.system, "toolId": alias.declared_id} if alias is not None else None,
        "closest": {
            "system": tool.system,
            "toolId": tool.declared_id,
            "score": round(row.score or 0.0, 1),
            "team": tool.owner.slug if tool.owner else None,
            "oncall": tool.owner.oncall if tool.owner else None,
        }
        if tool is not None
        else None,
    }


@router.get("/unknown-names", response=UnknownNamePage, summary="Names the runtime called that are no catalog tool")
def list_unknown_names(
    request: HttpRequest,
    verdict: Literal["open", "alias", "ignore", "all"] = Query("open", description="which names; `all` for every one"),
    limit: int = Query(50, ge=1, description=f"page size; above {UNKNOWN_NAMES_MAX_LIMIT} is clamped to it"),
    offset: int = Query(0, ge=0, le=1_000_000),
) -> dict[str, object]:
    limit = min(limit, UNKNOWN_NAMES_MAX_LIMIT)  # the answer's `limit` says what was applied
    count, rows = unknown_names_slice(verdict, limit=limit, offset=offset)
    return {"count": count, "limit": limit, "offset": offset, "items": [_item(r) for r in rows]}
