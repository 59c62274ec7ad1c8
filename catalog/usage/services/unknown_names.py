"""The names the runtime called that are no catalog tool, and the UI actions the frontend dropped: counted per name,
with when, which services and which agents (the first few of each), on the board an owner works through."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

from catalog.domain.keys import canonical_key
from catalog.models import UnknownToolName
from catalog.usage.domain.spans import Execution
from catalog.usage.services.upsert import upsert

LIST_MAX = 10  # services and agents remembered per name


@dataclass
class _Seen:
    first: datetime  # the first call noted; every call, this one included, is counted by add()
    last: datetime
    calls: int = 0
    services: set[str] = field(default_factory=set)
    agents: set[str] = field(default_factory=set)

    def add(self, when: datetime, service: str, agent: str) -> None:
        self.calls += 1
        self.first = min(self.first, when)
        self.last = max(self.last, when)
        if service:
            self.services.add(service)
        if agent:
            self.agents.add(agent)


def _grown(stored: list[str], new: set[str]) -> list[str]:
    kept = list(stored or [])
    for item in sorted(new - set(kept)):
        if len(kept) >= LIST_MAX:
            break
        kept.append(item)
    return kept


def record_unknown_names(unknown: Iterable[Execution], dropped: Iterable[tuple[str, str, str, datetime]]) -> list[str]:
    """Count each name; returns warnings (names not kept because the board is full: CONDOR_USAGE_MAX_UNKNOWN_NAMES)."""
    seen: dict[tuple[str, str], _Seen] = {}
    for e in unknown:
        called = (e.tool_name, UnknownToolName.Source.CALL)
        seen.setdefault(called, _Seen(e.started_at, e.started_at)).add(e.started_at, e.service, e.agent)
    for action, service, agent, when in dropped:
        seen.setdefault((action, UnknownToolName.Source.UI), _Seen(when, when)).add(when, service, agent)
    if not seen:
        return []
    names = {name for name, _ in seen}
    existing = set(UnknownToolName.objects.filter(name__in=names).values_list("name", "source"))
    fresh = sorted(k for k in seen if k not in existing)
    warnings = []
    room = max(0, settings.CONDOR_USAGE_MAX_UNKNOWN_NAMES - UnknownToolName.objects.count()) if fresh else 0
    if len(fresh) > room:
        warnings.append(
            f"{len(fresh) - room} unknown tool name(s) not kept: the board holds at most "
            f"{settings.CONDOR_USAGE_MAX_UNKNOWN_NAMES} (CONDOR_USAGE_MAX_UNKNOWN_NAMES); their spans were accepted"
        )
        for key in fresh[room:]:
            seen.pop(key)
    new = {
        (name, source): UnknownToolName(
            name=name,
            source=source,
            key=canonical_key(name)[:200],
            calls=got.calls,
            first_seen=got.first,
            last_seen=got.last,
            services=sorted(got.services)[:LIST_MAX],
            agents=sorted(got.agents)[:LIST_MAX],
        )
        for (name, source), got in seen.items()
    }

    def merge(row: UnknownToolName, add: UnknownToolName) -> None:
        row.calls += add.calls
        row.first_seen = min(row.first_seen, add.first_seen)
        row.last_seen = max(row.last_seen, add.last_seen)
        row.services = _grown(row.services, set(add.services))
        row.agents = _grown(row.agents, set(add.agents))

    upsert(
        UnknownToolName,
        new,
        existing=lambda: UnknownToolName.objects.filter(name__in={n for n, _ in new}),
        key=lambda row: (row.name, row.source),
        merge=merge,
        fields=["calls", "first_seen", "last_seen", "services", "agents"],
    )
    return warnings
