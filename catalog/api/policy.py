"""The effective-policy API: what the runtime may do with each tool under a profile (token scope `catalog:read`).

GET /api/v1/catalog/policy?profile=… (every live tool, or one system's) and
GET /api/v1/catalog/tools/{system}/{id}/policy?profile=…. Both carry an ETag that changes with every import,
sign-off and tier-floor change, and answer 304 to a matching If-None-Match.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime

from django.http import HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from ninja import Field, Path, Query, Router, Schema
from ninja.errors import HttpError

from catalog.core.api_errors import ErrorOut
from catalog.core.auth import ScopedBearer
from catalog.domain.vocabulary import SYSTEM_MAX, SYSTEM_PATTERN
from catalog.selectors.effect import ToolPolicy, UnknownProfile, effective_policies, policy_etag
from catalog.selectors.served import signed_off

router = Router(tags=["catalog"], auth=ScopedBearer("catalog:read"))

PROFILE_MAX_CHARS = 100
DECLARED_ID_MAX_CHARS = 200


class PolicyQuery(Schema):
    profile: str = Field(..., min_length=1, max_length=PROFILE_MAX_CHARS, description="a catalog profile slug")
    system: str | None = Field(
        None,
        max_length=SYSTEM_MAX,
        pattern=SYSTEM_PATTERN,
        description="only this system's tools: condor, tucan or mcp:<server id>",
    )


class ToolQuery(Schema):
    profile: str = Field(..., min_length=1, max_length=PROFILE_MAX_CHARS, description="a catalog profile slug")


class ToolPolicyOut(Schema):
    system: str
    declaredId: str
    inEffect: bool = Field(description="false: never signed off, so absent under this clinical profile")
    effectivePolicyClass: str | None
    hitlTier: str | None = Field(description="the tier the gate applies: the declared tier raised to its floors")
    declaredHitlTier: str | None
    floors: list[str] = Field(description="the tier floors that apply to it")
    retryClass: str | None = Field(description="never `transient` for a mutating tool")
    planEligible: bool
    revisionInEffect: int | None = Field(description="the revision whose declaration the runtime is served")
    awaitingSignoff: bool = Field(description="a newer declaration waits for a safety officer's sign-off")
    newestRevision: int


class SignedOffOut(Schema):
    system: str
    revision: int | None = Field(description="its newest approved revision: what is in effect came with it; null: none")
    automatic: bool = Field(description="approved at import: it weakened nothing, so no officer had to sign it off")
    by: list[str] = Field(description="the safety officers whose approvals counted")
    at: datetime | None = Field(description="when the last of them approved (or the automatic revision's import)")


class PolicyOut(Schema):
    profile: str
    signedOff: list[SignedOffOut] = Field(
        description="per system in the answer, since which sign-off clinical profiles are served what is in effect"
    )
    tools: list[ToolPolicyOut]


def _out(p: ToolPolicy) -> dict[str, object]:
    return {
        "system": p.system,
        "declaredId": p.declared_id,
        "inEffect": p.in_effect,
        "effectivePolicyClass": p.effective_policy_class,
        "hitlTier": p.hitl_tier,
        "declaredHitlTier": p.declared_hitl_tier,
        "floors": list(p.floors),
        "retryClass": p.retry_class,
        "planEligible": p.plan_eligible,
        "revisionInEffect": p.revision_in_effect,
        "awaitingSignoff": p.awaiting_signoff,
        "newestRevision": p.newest_revision,
    }


# The answer per ETag, kept in this process: the ETag names every import, sign-off and floor change, so a kept body
# is never stale; a runtime fleet asking after a change costs one build per process (4 s at 50,000 tools,
# bench/governance.py), not one per caller. A few entries: profiles x systems in use.
_KEPT: OrderedDict[str, bytes] = OrderedDict()
_KEPT_MAX = 16
_kept_lock = threading.Lock()


def _answer(etag: str, build: Callable[[], object], schema: type[Schema]) -> HttpResponse:
    with _kept_lock:
        body = _KEPT.get(etag)
    if body is None:
        body = schema.model_validate(build()).model_dump_json().encode("utf-8")
        with _kept_lock:
            _KEPT[etag] = body
            while len(_KEPT) > _KEPT_MAX:
                _KEPT.popitem(last=False)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["ETag"] = etag
    response["Cache-Control"] = "no-cache"
    return response


_ETAG = {
    "ETag": {
        "required": True,
        "description": "send it as If-None-Match to get a 304 until something changes",
        "schema": {"type": "string"},
    }
}
ETAG_ANSWERS = {"responses": {200: {"headers": _ETAG}, 304: {"headers": _ETAG}}}


def _not_modified(request: HttpRequest, etag: str) -> HttpResponse | None:
    not_modified = get_conditional_response(request, etag=etag)
    if not_modified is not None:
        not_modified["ETag"] = etag
    return not_modified


@router.get(
    "/policy",
    response={200: PolicyOut, 304: None, 422: ErrorOut},
    summary="The effective policy of every live tool under a profile (clinical profiles: what is signed off)",
    description="422 also for a profile that does not exist.",
    openapi_extra=ETAG_ANSWERS,
)
def catalog_policy(request: HttpRequest, query: Query[PolicyQuery]) -> HttpResponse:
    return served_answer(request, query.profile, query.system)


def served_answer(request: HttpRequest, profile: str, system: str | None = None) -> HttpResponse:
    """What every live tool is served under `profile` and since which sign-off: the API's answer, and the console's
    export of it (catalog.web.views.governance). Raises HttpError 422 for a profile that does not exist."""
    etag = policy_etag(profile, system=system)
    if (cached := _not_modified(request, etag)) is not None:
        return cached

    def build() -> dict[str, object]:
        try:
            policies = effective_policies(profile=profile, system=system)
        except UnknownProfile as exc:
            raise HttpError(422, str(exc)) from exc
        signed = [
            {"system": s.system, "revision": s.revision, "automatic": s.automatic, "by": list(s.by), "at": s.at}
            for s in signed_off([system] if system else None)
        ]
        return {"profile": profile, "signedOff": signed, "tools": [_out(p) for p in policies]}

    return _answer(etag, build, PolicyOut)


@router.get(
    "/tools/{system}/{declared_id}/policy",
    response={200: ToolPolicyOut, 304: None, 404: ErrorOut, 422: ErrorOut},
    summary="The effective policy of one live tool under a profile",
    description="422 also for a profile that does not exist.",
    openapi_extra=ETAG_ANSWERS,
)
def tool_policy(
    request: HttpRequest,
    query: Query[ToolQuery],
    system: str = Path(
        ..., max_length=SYSTEM_MAX, pattern=SYSTEM_PATTERN, description="condor, tucan or mcp:<server id>"
    ),
    declared_id: str = Path(..., max_length=DECLARED_ID_MAX_CHARS),
) -> HttpResponse:
    etag = policy_etag(query.profile, system=system, declared_id=declared_id)
    if (cached := _not_modified(request, etag)) is not None:
        return cached

    def build() -> dict[str, object]:
        try:
            policies = effective_policies(profile=query.profile, system=system, declared_id=declared_id)
        except UnknownProfile as exc:
            raise HttpError(422, str(exc)) from exc
        if not policies:
            raise HttpError(404, f"{system}:{declared_id} is not a live tool (send the declared id exactly)")
        return _out(policies[0])

    return _answer(etag, build, ToolPolicyOut)
