"""One OTLP span read as what the runtime did: a tool execution (GenAI semantic conventions), a UI action the frontend
dropped, or a problem that refuses the span (OTLP partial success). Pure: plain values in, plain values out.

The attributes read (catalog/usage/README.md, "What is read", lists them with their bounds):
- `gen_ai.operation.name` = `execute_tool` marks a tool execution; every other span is ignored (not refused);
- `gen_ai.tool.name` (required on a tool execution), `gen_ai.tool.call.id`, `gen_ai.agent.name`, `error.type`
  (or the span's status ERROR), the resource's `service.name`;
- the optional `condor.*` attributes the runtime may stamp: `condor.policy_class`, `condor.hitl_tier`,
  `condor.retry_class` (what it put on the tool object), `condor.retry.attempt`, `condor.candidate_set_id`,
  `condor.profile`, `condor.approval_id`, `condor.system`, and `condor.ui.dropped_action` (on any span: the
  UI action type the frontend's dispatcher dropped, `handler:dropped`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

EXECUTE_TOOL = "execute_tool"
STATUS_ERROR = 2
OTHER_ERROR = "_OTHER"  # the semantic conventions' error.type when nothing more is known
NAME_MAX = 200  # tool name, tool call id, agent, service, error type, dropped UI action
SHORT_MAX = 100  # profile, system, stamped policy values, approval id
CANDIDATE_SET_MAX = 40
MAX_ATTEMPT = 1000
FUTURE_SKEW = timedelta(minutes=5)  # a clock this far ahead of ours is believed; further is refused

STAMPS = {"condor.policy_class": "policy_class", "condor.hitl_tier": "hitl_tier", "condor.retry_class": "retry_class"}


@dataclass(frozen=True)
class RawSpan:
    """The fields of one OTLP span this code reads, as plain values (catalog.usage.otlp builds them)."""

    path: str  # where it sat in the request, for the partial-success message
    name: str
    trace_id: str  # hex
    span_id: str  # hex
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str
    attributes: Mapping[str, Any]
    resource: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Execution:
    tool_name: str
    started_at: datetime
    duration_ms: float
    error_type: str  # "" when it succeeded
    tool_call_id: str
    trace_id: str
    span_id: str
    service: str
    agent: str
    profile: str
    system: str
    attempt: int | None
    candidate_set_id: str
    approval_id: str
    stamped: dict[str, str]  # policy_class / hitl_tier / retry_class as stamped, only those present


@dataclass(frozen=True)
class SpanReading:
    execution: Execution | None = None
    dropped_action: str = ""  # a UI action the frontend dropped
    problem: str = ""  # non-empty: the span is refused, nothing of it is kept


class _Refused(Exception):
    pass


def read_span(span: RawSpan, *, now: datetime, oldest: datetime) -> SpanReading:
    """What `span` says. `oldest`: the start of the retained window; an execution before it is refused, as is one
    more than FUTURE_SKEW ahead of `now`."""
    attrs = span.attributes
    try:
        dropped = _text(attrs, "condor.ui.dropped_action", NAME_MAX)
        if attrs.get("gen_ai.operation.name") != EXECUTE_TOOL:
            return SpanReading(dropped_action=dropped)
        return SpanReading(execution=_execution(span, now=now, oldest=oldest), dropped_action=dropped)
    except _Refused as refused:
        return SpanReading(problem=f"{span.path}: {refused}")


def _execution(span: RawSpan, *, now: datetime, oldest: datetime) -> Execution:
    attrs = span.attributes
    tool_name = _text(attrs, "gen_ai.tool.name", NAME_MAX)
    if not tool_name:
        raise _Refused("an execute_tool span without gen_ai.tool.name")
    if span.start_ns <= 0 or span.end_ns < span.start_ns:
        raise _Refused(f"end time {span.end_ns} before start time {span.start_ns} (or no start time)")
    started = datetime.fromtimestamp(span.start_ns / 1e9, tz=UTC)
    if started < oldest:
        raise _Refused(f"started {started:%Y-%m-%d %H:%M:%S}Z, before the retained window ({oldest:%Y-%m-%d %H:%M}Z)")
    if started > now + FUTURE_SKEW:
        raise _Refused(f"started {started:%Y-%m-%d %H:%M:%S}Z, more than {FUTURE_SKEW} ahead of the console's clock")
    error_type = _text(attrs, "error.type", NAME_MAX)
    if not error_type and span.status_code == STATUS_ERROR:
        error_type = OTHER_ERROR
    return Execution(
        tool_name=tool_name,
        started_at=started,
        duration_ms=(span.end_ns - span.start_ns) / 1e6,
        error_type=error_type,
        tool_call_id=_text(attrs, "gen_ai.tool.call.id", NAME_MAX),
        trace_id=span.trace_id[:32],
        span_id=span.span_id[:16],
        service=_cut(span.resource.get("service.name"), NAME_MAX),
        agent=_text(attrs, "gen_ai.agent.name", NAME_MAX),
        profile=_text(attrs, "condor.profile", SHORT_MAX),
        system=_text(attrs, "condor.system", SHORT_MAX),
        attempt=_attempt(attrs),
        candidate_set_id=_text(attrs, "condor.candidate_set_id", CANDIDATE_SET_MAX),
        approval_id=_text(attrs, "condor.approval_id", SHORT_MAX),
        stamped={name: _text(attrs, key, SHORT_MAX) for key, name in STAMPS.items() if key in attrs},
    )


def _text(attrs: Mapping[str, Any], key: str, limit: int) -> str:
    """A string attribute within its bound ("" when absent); anything else refuses the span, naming the attribute."""
    value = attrs.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Refused(f"{key} must be a string, not {type(value).__name__}")
    value = value.strip()
    if len(value) > limit:
        raise _Refused(f"{key}: {len(value)} characters; at most {limit}")
    if any(ord(c) < 32 for c in value):
        raise _Refused(f"{key}: control characters are not allowed")
    return value


def _cut(value: Any, limit: int) -> str:
    """A resource attribute: never refuses the spans under it, only cut to its bound."""
    return value.strip()[:limit] if isinstance(value, str) else ""


def _attempt(attrs: Mapping[str, Any]) -> int | None:
    value = attrs.get("condor.retry.attempt")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ATTEMPT:
        raise _Refused(f"condor.retry.attempt must be an integer from 1 to {MAX_ATTEMPT}, not {value!r}")
    return value


def minute_of(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)
