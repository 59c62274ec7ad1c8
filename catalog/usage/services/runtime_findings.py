"""Safety findings from what ran: each execution checked against the declaration in effect (catalog.usage.domain.
safety), recorded as findings of the runtime rules (catalog/domain/rules/runtime.py), one per tool and rule, with
how often and the latest evidence. An import never replaces them; the beat drops one not seen again for
CONDOR_USAGE_FINDING_DAYS days."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catalog.core.evidence import spent_approvals
from catalog.domain.messages import N_, Message
from catalog.domain.rules import RULES
from catalog.domain.rules.runtime import OUTSIDE_CANDIDATE_SET, RETRIED_WRITE, STAMP_MISMATCH, UNAPPROVED_EXECUTION
from catalog.models import CandidateSet, CatalogState, Finding, MutatingCall, Tool
from catalog.services.finding_counts import finding_counts_refresh
from catalog.usage.catalog_index import UsageIndex
from catalog.usage.domain.safety import (
    ToolRef,
    approval_needed,
    candidate_set_message,
    retried_write_message,
    stamp_mismatch_messages,
)
from catalog.usage.domain.spans import Execution
from catalog.usage.services.upsert import upsert

EXAMPLES_MAX = 5  # the latest pieces of evidence kept on a finding
TRACES_MAX = 5


@dataclass(frozen=True)
class _Evidence:
    message: Message  # kept in English in the finding's details (the API), translated on pages
    at: datetime
    tool_call_id: str
    trace_id: str
    profile: str

    def as_json(self) -> dict[str, Any]:
        return {
            "message": self.message.render(),
            "at": self.at.isoformat(),
            "toolCallId": self.tool_call_id,
            "traceId": self.trace_id,
            "profile": self.profile,
        }


def _evidence(e: Execution, message: Message) -> _Evidence:
    return _Evidence(message, e.started_at, e.tool_call_id, e.trace_id, e.profile)


def record_runtime_findings(known: list[tuple[Execution, ToolRef]], *, index: UsageIndex, now: datetime) -> int:
    """Check every execution; returns how many (tool, rule) findings were recorded or updated."""
    found: dict[tuple[int, str], list[_Evidence]] = defaultdict(list)
    for (pk, call_id), (count, e, ref) in _retried_writes(known, now).items():
        message = retried_write_message(ref, call_id, count)
        if message:
            found[(pk, RETRIED_WRITE)].append(_evidence(e, message))
    sets = _candidate_sets({e.candidate_set_id for e, _ in known if e.candidate_set_id})
    needing: list[tuple[Execution, ToolRef, str]] = []
    for e, ref in known:
        clinical = index.is_clinical(e.profile)
        served = ref.served(clinical)
        mismatch = stamp_mismatch_messages(e.stamped, served)
        if mismatch:
            found[(ref.pk, STAMP_MISMATCH)].append(_evidence(e, _stamp_message(ref, e, mismatch)))
        why = approval_needed(served, clinical=clinical)
        if why:
            needing.append((e, ref, why))
        outside = candidate_set_message(ref, e, sets.get(e.candidate_set_id))
        if outside:
            found[(ref.pk, OUTSIDE_CANDIDATE_SET)].append(_evidence(e, outside))
    for e, ref, message in _unapproved(needing):
        found[(ref.pk, UNAPPROVED_EXECUTION)].append(_evidence(e, message))
    if found:
        _store(found, {ref.pk: ref for _, ref in known}, now)
    return len(found)


def _stamp_message(ref: ToolRef, e: Execution, mismatch: list[Message]) -> Message:
    where = (
        Message(N_("under profile %(profile)s"), {"profile": repr(e.profile)})
        if e.profile
        else Message(N_("under no named profile (judged as clinical)"))
    )
    joined = {f"m{i}": m for i, m in enumerate(mismatch)}
    return Message(
        N_("%(tool)s ran %(where)s with %(mismatch)s"),
        {"tool": ref.declared_id, "where": where, "mismatch": Message("; ".join(f"%({k})s" for k in joined), joined)},
    )


def _retried_writes(
    known: list[tuple[Execution, ToolRef]], now: datetime
) -> dict[tuple[int, str], tuple[int, Execution, ToolRef]]:
    """Count each mutating tool's executions per tool call id (across requests, within the window); the calls that
    ran more than once, with their count and this batch's latest execution."""
    batch: dict[tuple[int, str], list[tuple[Execution, ToolRef]]] = defaultdict(list)
    for e, ref in known:
        if ref.ever_mutating and e.tool_call_id:
            batch[(ref.pk, e.tool_call_id)].append((e, ref))
    if not batch:
        return {}
    new = {
        (pk, call): MutatingCall(
            tool_id=pk,
            tool_call_id=call,
            executions=len(runs),
            first_seen=now,
            last_seen=now,
            trace_ids=sorted({e.trace_id for e, _ in runs})[:TRACES_MAX],
        )
        for (pk, call), runs in batch.items()
    }

    def merge(stored: MutatingCall, add: MutatingCall) -> None:
        stored.executions += add.executions
        stored.last_seen = now
        stored.trace_ids = (list(stored.trace_ids) + [t for t in add.trace_ids if t not in stored.trace_ids])[
            :TRACES_MAX
        ]

    rows = upsert(
        MutatingCall,
        new,
        existing=lambda: MutatingCall.objects.filter(
            tool_id__in={k[0] for k in new}, tool_call_id__in={k[1] for k in new}
        ),
        key=lambda row: (row.tool_id, row.tool_call_id),
        merge=merge,
        fields=["executions", "last_seen", "trace_ids"],
    )
    retried = {}
    for row in rows:
        if row.executions > 1:
            e, ref = max(batch[(row.tool_id, row.tool_call_id)], key=lambda pair: pair[0].started_at)
            retried[(row.tool_id, row.tool_call_id)] = (row.executions, e, ref)
    return retried


def _candidate_sets(ids: set[str]) -> dict[str, list[str]]:
    if not ids:
        return {}
    return dict(CandidateSet.objects.filter(set_id__in=ids).values_list("set_id", "tool_keys"))


def _unapproved_message(e: Execution, ref: ToolRef, why: str) -> Message:
    named = (
        Message(N_("tool call %(call)s"), {"call": repr(e.tool_call_id)})
        if e.tool_call_id
        else Message(N_("a call without gen_ai.tool.call.id"))
    )
    return Message(
        N_(
            "%(tool)s is %(why)s and ran under profile %(profile)s for %(named)s without a consumed approval for "
            "that call"
        ),
        {
            "tool": ref.declared_id,
            "why": Message(why),
            "profile": repr(e.profile or "(none named: judged clinical)"),
            "named": named,
        },
    )


def _unapproved(needing: list[tuple[Execution, ToolRef, str]]) -> list[tuple[Execution, ToolRef, Message]]:
    """The executions that needed an approval and have no consumed one, for that tool, naming their tool call
    (gen_ai.tool.call.id) or their request (condor.approval_id)."""
    if not needing:
        return []
    spent = spent_approvals(
        {e.tool_call_id for e, _, _ in needing if e.tool_call_id},
        {e.approval_id for e, _, _ in needing if e.approval_id},
    )
    by_call = {(s.tool_call_id, s.tool_pk) for s in spent if s.tool_call_id}
    by_request = {(s.request_id, s.tool_pk) for s in spent}
    missing = []
    for e, ref, why in needing:
        if (e.tool_call_id, ref.pk) in by_call or (e.approval_id, ref.pk) in by_request:
            continue
        missing.append((e, ref, _unapproved_message(e, ref, why)))
    return missing


def _store(found: dict[tuple[int, str], list[_Evidence]], refs: dict[int, ToolRef], now: datetime) -> None:
    """One finding per (tool, rule): created on first evidence, then its count, last time and latest evidence."""
    pks = sorted({pk for pk, _ in found})
    rules = sorted({rule for _, rule in found})
    # The tools' rows serialise two ingests finding the same (tool, rule) for the first time (one finding each:
    # the constraint finding_runtime_unique holds it).
    list(Tool.objects.select_for_update().filter(pk__in=pks).order_by("pk").values_list("pk", flat=True))
    existing = {
        (f.tool_id, f.rule): f
        for f in Finding.objects.select_for_update().filter(tool_id__in=pks, rule__in=rules).order_by("pk")
    }
    revisions = dict(
        CatalogState.objects.filter(system__in={refs[pk].system for pk in pks}).values_list(
            "system", "current_revision_id"
        )
    )
    created, changed = [], []
    for (pk, rule), evidence in sorted(found.items(), key=lambda item: item[0]):
        evidence.sort(key=lambda ev: ev.at)
        finding = existing.get((pk, rule))
        if finding is None:
            finding = Finding(
                system=refs[pk].system,
                tool_id=pk,
                rule=rule,
                severity=RULES[rule].severity.value,
                revision_id=revisions[refs[pk].system],
                details={"occurrences": 0, "firstSeen": evidence[0].at.isoformat(), "examples": []},
            )
            created.append(finding)
        else:
            changed.append(finding)
        details = dict(finding.details or {})
        details["occurrences"] = int(details.get("occurrences", 0)) + len(evidence)
        details["lastSeen"] = evidence[-1].at.isoformat()
        details["recordedAt"] = now.isoformat()
        details["examples"] = ([ev.as_json() for ev in reversed(evidence)] + list(details.get("examples", [])))[
            :EXAMPLES_MAX
        ]
        finding.details = details
        text = Message(
            N_("%(latest)s (%(n)s time(s) since %(since)s)"),
            {"latest": evidence[-1].message, "n": details["occurrences"], "since": details["firstSeen"][:10]},
        )
        finding.message, finding.text = text.render(), text.as_json()
    Finding.objects.bulk_create(created)
    Finding.objects.bulk_update(changed, ["details", "message", "text"])
    finding_counts_refresh(f.tool_id for f in created)
