"""The one JSON shape of the API's refusals: what was wrong, and each problem with where it is.

Every endpoint's error answers and the API's own (bad token, missing scope, invalid parameters, body too large,
database away; `condor_admin/api.py` documents those on every operation) use it, so a client reads one shape.
The approvals API extends it with the refusal's reason code and the request it concerns (`approvals/api.py`).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorOut(BaseModel):
    detail: str = Field(description="what was wrong and what to do")
    errors: list[str] = Field(
        default_factory=list, description="each problem with its location (`body.payload.runId: …`), when several"
    )
