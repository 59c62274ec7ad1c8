"""The findings API: the same list as /findings/, filterable, for services (token scope `catalog:read`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import Field

from catalog.core.api_errors import ErrorOut
from catalog.core.auth import ScopedBearer
from catalog.domain.rules import RULES
from catalog.domain.vocabulary import SYSTEM_MAX, SYSTEM_PATTERN_OR_EMPTY, system_problem
from catalog.models import Severity
from catalog.selectors.governance import findings_list

router = Router(tags=["catalog"], auth=ScopedBearer("catalog:read"))


class FindingOut(Schema):
    system: str
    tool: str | None
    owner: str | None
    rule: str
    severity: str
    message: str
    details: dict[str, object]
    revision: int
    waived: bool
    waived_until: datetime | None
    waived_by: str | None


# The largest page of findings one call returns: ?limit=100000 gets this many (and says so), not a 422.
FINDINGS_MAX_LIMIT = 500


class FindingPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[FindingOut]


@router.get("/findings", response={200: FindingPage, 422: ErrorOut}, summary="Findings, filterable")
def list_findings(
    request: HttpRequest,
    # Checked below with messages that list what is known; the schema lists the same values ("" is no filter).
    rule: Annotated[str, Field(json_schema_extra={"enum": ["", *sorted(RULES)]})] | None = None,
    severity: Annotated[str, Field(json_schema_extra={"enum": ["", *Severity.values]})] | None = None,
    system: Annotated[str, Field(json_schema_extra={"pattern": SYSTEM_PATTERN_OR_EMPTY, "maxLength": SYSTEM_MAX})]
    | None = None,
    owner: str | None = Query(None, max_length=100, description='team id, or "-" for unowned tools'),
    waived: bool | None = None,
    limit: int = Query(100, ge=1, description=f"page size; above {FINDINGS_MAX_LIMIT} is clamped to it"),
    # Bounded: an offset past a 64-bit integer made the database fail (a 500) instead of answering [].
    offset: int = Query(0, ge=0, le=1_000_000),
) -> Status[dict[str, object]]:
    problems = []
    if rule and rule not in RULES:
        problems.append(f"rule: unknown rule {rule!r}; known rules are {', '.join(sorted(RULES))}")
    if severity and severity not in Severity.values:
        problems.append(f"severity: expected one of {', '.join(Severity.values)}")
    if system and system_problem(system):
        problems.append(f"system: {system_problem(system)}")
    if problems:
        return Status(422, {"detail": "invalid filter", "errors": problems})
    limit = min(limit, FINDINGS_MAX_LIMIT)  # the answer's `limit` says what was applied
    qs = findings_list(rule=rule, severity=severity, system=system, owner=owner, waived=waived)
    items = [
        {
            "system": f.system,
            "tool": f.tool.declared_id if f.tool else None,
            "owner": f.tool.owner.slug if f.tool and f.tool.owner else None,
            "rule": f.rule,
            "severity": f.severity,
            "message": f.message,
            "details": f.details,
            "revision": f.revision.number,
            "waived": f.waived_until is not None,
            "waived_until": f.waived_until,
            "waived_by": f.waived_by,
        }
        for f in qs[offset : offset + limit]
    ]
    return Status(200, {"count": qs.count(), "limit": limit, "offset": offset, "items": items})
