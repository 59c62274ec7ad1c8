"""The rules found in what ran (catalog.usage): the seed's defects that only show at run time.

Their evidence is tool-call telemetry, so they have no check over declarations; `catalog.usage.domain.safety`
decides each finding from an execution and the declaration in effect, and the ingest service stores it.
"""

from __future__ import annotations

from catalog.domain.messages import N_
from catalog.domain.rules.base import Severity, runtime_rule

RETRIED_WRITE = "runtime-retried-write"
STAMP_MISMATCH = "runtime-stamp-mismatch"
UNAPPROVED_EXECUTION = "runtime-unapproved-execution"
OUTSIDE_CANDIDATE_SET = "runtime-outside-candidate-set"
RUNTIME_RULES = (RETRIED_WRITE, STAMP_MISMATCH, UNAPPROVED_EXECUTION, OUTSIDE_CANDIDATE_SET)

# A write that ran twice for one tool call is a duplicate prescription or bill: never waived.
runtime_rule(RETRIED_WRITE, Severity.ERROR, N_("a mutating tool ran more than once for one tool call"), waivable=False)
# The seed's ungated-policy-class defect: what the runtime stamped on the tool object is not what is in effect.
runtime_rule(
    STAMP_MISMATCH,
    Severity.ERROR,
    N_("the runtime stamped a policy that disagrees with the one in effect"),
    waivable=False,
)
runtime_rule(
    UNAPPROVED_EXECUTION,
    Severity.ERROR,
    N_("a tier-high tool ran under a clinical profile without a consumed approval for that call"),
    waivable=False,
)
# A tool outside the resolved set may be a deliberate planner choice (a follow-up the set did not foresee): waivable.
runtime_rule(
    OUTSIDE_CANDIDATE_SET,
    Severity.WARNING,
    N_("a tool ran that was not in the candidate set of its run"),
    waivable=True,
)
