"""A week of made-up runtime telemetry for the demo catalogs, so `make run` shows tool health, dead tools, the
unknown-names board and each runtime finding before any runtime is connected. Goes through the ingest service
as spans (the same reading, rollups and checks as the OTLP endpoint), then the beat's compaction. Loaded once: a
database that has heard from any runtime gets nothing more.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.utils import timezone

from catalog.models import TelemetrySource, Tool
from catalog.usage.domain.spans import RawSpan
from catalog.usage.services.ingest import usage_ingest
from catalog.usage.services.retention import usage_compact

SERVICE = "demo-runtime"
DAYS = 7
BATCH = 1000
# The seed's hallucinated names: what the LLM called, and a UI action the frontend dropped.
HALLUCINATED = (("get_clinical_notes", 37, "clinical"), ("render_component", 5, "ui"))
DROPPED_ACTIONS = (("open_panel", 12), ("close_panel", 4))


def _span(n: int, tool: str, start: datetime, ms: float, **attrs: object) -> RawSpan:
    start_ns = int(start.timestamp() * 1e9)
    attributes: dict[str, object] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    attributes.update({k.replace("__", "."): v for k, v in attrs.items() if v != ""})
    return RawSpan(
        path=f"demo[{n}]",
        name=f"execute_tool {tool}",
        trace_id=f"{n:032x}",
        span_id=f"{n:016x}",
        start_ns=start_ns,
        end_ns=start_ns + int(ms * 1e6),
        status_code=2 if "error.type" in attributes else 0,
        status_message="",
        attributes=attributes,
        resource={"service.name": SERVICE},
    )


def _traffic(rng: random.Random, tools: list[Tool], now: datetime) -> list[RawSpan]:
    """Zipf-like calls over the week for most business tools; a tenth are never called (dead tools)."""
    spans: list[RawSpan] = []
    called = [t for i, t in enumerate(tools) if i % 10 != 9]
    for rank, tool in enumerate(called, start=1):
        per_day = max(1, int(240 / rank))
        flaky = rank % 7 == 3  # some tools fail now and then
        for _ in range(per_day * DAYS):
            start = now - timedelta(seconds=rng.uniform(60, DAYS * 86400))
            ms = rng.lognormvariate(4.0 if tool.is_mutating else 3.2, 0.6)
            error = rng.choice(["timeout", "upstream_503", "validation"]) if flaky and rng.random() < 0.08 else ""
            spans.append(
                _span(
                    len(spans),
                    tool.llm_name,
                    start,
                    ms,
                    error__type=error,
                    gen_ai__tool__call__id=f"d{len(spans)}",
                    condor__profile="demo",
                    condor__system=tool.system,
                )
            )
    return spans


def _defects(tools: list[Tool], now: datetime, first: int) -> list[RawSpan]:
    """One of each runtime finding, on the demo's own tools, and the seed's hallucinated names."""
    spans: list[RawSpan] = []
    mutating = [t for t in tools if t.is_mutating]
    at = now - timedelta(hours=3)
    if mutating:
        write = mutating[0]
        for attempt in (1, 2):  # a write retried under the same tool call id: it landed twice
            spans.append(
                _span(
                    first + len(spans),
                    write.llm_name,
                    at,
                    180,
                    gen_ai__tool__call__id="demo-retried",
                    condor__profile="demo",
                    condor__retry__attempt=attempt,
                )
            )
        stamped = mutating[-1]  # the seed's ungated policy class: the tool object said `read`
        spans.append(
            _span(
                first + len(spans),
                stamped.llm_name,
                at,
                90,
                condor__policy_class="read",
                condor__profile="demo",
                gen_ai__tool__call__id="demo-stamped",
            )
        )
    high = [t for t in mutating if t.hitl_tier == "high"]
    if high:  # under the clinical profile, with no approval consumed for the call
        spans.append(
            _span(
                first + len(spans),
                high[0].llm_name,
                at,
                140,
                condor__profile="clinical-production",
                gen_ai__tool__call__id="demo-unapproved",
            )
        )
    for name, count, agent in HALLUCINATED:
        for i in range(count):
            spans.append(_span(first + len(spans), name, now - timedelta(hours=i + 1), 3, gen_ai__agent__name=agent))
    for action, count in DROPPED_ACTIONS:
        for i in range(count):
            spans.append(
                _span(
                    first + len(spans),
                    "show_modal",
                    now - timedelta(hours=2 * i + 1),
                    12,
                    condor__ui__dropped_action=action,
                    gen_ai__agent__name="clinical",
                )
            )
    return spans


def usage_demo_load(*, now: datetime | None = None) -> str:
    if TelemetrySource.objects.exists():
        return "demo telemetry: a runtime has sent spans already, nothing added"
    now = now or timezone.now()
    rng = random.Random(22)
    tools = list(Tool.objects.live().filter(plane="business").order_by("system", "declared_id"))
    spans = _traffic(rng, tools, now)
    spans += _defects(tools, now, len(spans))
    kept = 0
    for i in range(0, len(spans), BATCH):
        kept += usage_ingest(spans[i : i + BATCH], now=now).executions
    done = usage_compact(now=now)
    return f"demo telemetry: {kept} tool calls over {DAYS} days ({done.hours} hours compacted)"
