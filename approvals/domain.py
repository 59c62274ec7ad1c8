"""The HITL approval rules as plain functions over plain values (no Django here).

- `suspend_policy`: may a tool call run now, must a human approve it first, or is it refused?
- `canonical_args` / `args_sha256`: the one byte form of a call's arguments and its hash; the hash the
  approver saw is the only hash that may be consumed.
- `request_ttl`: how long a suspended request waits for a decision.
- `effective_state` and `consume_refusal`: what a request's state means now, and why a consume is refused.
- `replay_differences`: what a reused idempotency key's call changed (a replay must repeat the whole call).
- `identity_key`: the one form of a person's name that four-eyes compares (case, look-alikes, decorations).
- `candidate_set_refusal`: a call that names the candidate set its run was resolved with may only call a tool of it.
- `newest_earlier` / `with_duplicate`: a call that repeats an earlier one (same tool, patient and arguments under
  another idempotency key, within the duplicate window) is a possible duplicate: said, and never allowed unseen.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from functools import lru_cache
from typing import Any

from catalog.domain.lookalikes import LETTERS_AND_SEPARATORS

READ = "read"
HIGH = "high"
LOW = "low"
# Settings and counts key the tier of a mutating tool that declares none (every mutating TUCAN tool).
UNGATED = "ungated"
TIER_LOW_OPERATOR = "tier-low-operator"  # the one reason a mutation is allowed without an approver


class DispatchMode(StrEnum):
    """How the runtime dispatched the call (the seed's terms)."""

    OPERATOR = "operator"  # the human who typed the request is in the chat
    SUPERVISED = "supervised"
    AMBIENT = "ambient"


class Decision(StrEnum):
    ALLOW = "allow"
    SUSPEND = "suspend"
    REFUSE = "refuse"


class State(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    CONSUMED = "consumed"


DECIDED_STATES = frozenset({State.APPROVED, State.REJECTED, State.CONSUMED})


@dataclass(frozen=True)
class PolicyOutcome:
    decision: Decision
    reason: str  # a machine-readable code: the runtime branches on it, people read `message`
    message: str
    flagged: bool = False  # suspended only because the mutation declares no tier: fail closed, and say so
    # The tier a suspended request is counted and timed under (`ungated` for a tier-less mutation).
    tier_key: str | None = None


def suspend_policy(
    *,
    known: bool,
    plan_eligible: bool,
    effective_policy_class: str | None,
    is_mutating: bool,
    hitl_tier: str | None,
    dispatch_mode: str,
    tool: str = "the tool",
    profile: str = "the profile",
) -> PolicyOutcome:
    """The suspend gate: one decision for one tool call, failing closed wherever the catalog is unclear.

    Order matters: a tool the catalog does not know (or that the profile does not make plan-eligible)
    is refused before anything about it is trusted; a read runs; a mutation suspends unless its tier is
    `low` and the person who typed the request is in the chat (their typing is the approval).
    """
    refusal = _refusal(
        known=known, plan_eligible=plan_eligible, dispatch_mode=dispatch_mode, tool=tool, profile=profile
    )
    if refusal is not None:
        return refusal
    # Both the class and the predicate are consulted: a row that reads as `read` but mutates is a mutation.
    mutates = is_mutating or effective_policy_class != READ
    if not mutates:
        return PolicyOutcome(Decision.ALLOW, "read", f"{tool} only reads")
    if hitl_tier == HIGH:
        return PolicyOutcome(
            Decision.SUSPEND, "tier-high", f"{tool} is tier high: it always waits for an approver", tier_key=HIGH
        )
    if hitl_tier == LOW:
        if dispatch_mode == DispatchMode.OPERATOR:
            return PolicyOutcome(
                Decision.ALLOW, TIER_LOW_OPERATOR, f"{tool} is tier low and the requesting person is in the chat"
            )
        return PolicyOutcome(
            Decision.SUSPEND,
            "tier-low-unattended",
            f"{tool} is tier low and dispatch mode {dispatch_mode} has no person in the chat to approve it",
            tier_key=LOW,
        )
    # No tier (or one this code does not know) on a mutation: the seed's ungated-mutation hole. Never allow.
    return PolicyOutcome(
        Decision.SUSPEND,
        "ungated-mutation",
        f"{tool} mutates but declares no HITL tier: suspended and flagged (fail closed); declare a tier",
        flagged=True,
        tier_key=UNGATED,
    )


def _refusal(*, known: bool, plan_eligible: bool, dispatch_mode: str, tool: str, profile: str) -> PolicyOutcome | None:
    """The calls refused before anything about the tool is trusted: unknown mode, unknown tool, not plan-eligible."""
    if dispatch_mode not in DispatchMode.__members__.values():
        modes = ", ".join(m.value for m in DispatchMode)
        return PolicyOutcome(
            Decision.REFUSE, "unknown-dispatch-mode", f"dispatchMode {dispatch_mode!r} is not one of {modes}"
        )
    if not known:
        return PolicyOutcome(
            Decision.REFUSE,
            "unknown-tool",
            f"{tool} is not a live tool of the catalog under any spelling; the planner must not call it",
        )
    if not plan_eligible:
        return PolicyOutcome(
            Decision.REFUSE,
            "not-plan-eligible",
            f"{tool} is not plan-eligible under profile {profile} (only business-plane tools whose availability "
            "the profile activates, or that it includes by id, are)",
        )
    return None


# --- canonical arguments ---------------------------------------------------------------------------


class ArgsError(ValueError):
    """Arguments that cannot be put in canonical form; the message names the JSON location."""


def _normalise(value: Any, where: str) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ArgsError(f"{where}: {value} is not a JSON number")
        # 2.0 and 2 are one number in JSON (and in JavaScript's JSON.stringify): hash them alike.
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ArgsError(f"{where}: object keys must be strings, got {key!r}")
            out[key] = _normalise(item, f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_normalise(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise ArgsError(f"{where}: {type(value).__name__} is not a JSON value")


def canonical_args(args: Mapping[str, Any]) -> str:
    """Sorted keys, no whitespace, UTF-8 text, integral numbers without a fraction: one text per meaning."""
    if not isinstance(args, Mapping):
        raise ArgsError("args: must be a JSON object")
    return json.dumps(_normalise(args, "args"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def args_sha256(args: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_args(args).encode("utf-8")).hexdigest()


def canonical_copy(args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as they are stored: the canonical form read back."""
    return json.loads(canonical_args(args))


# --- expiry ----------------------------------------------------------------------------------------


def request_ttl(
    *, tier_key: str, requested: int | None, defaults: Mapping[str, int], minimum: int, maxima: Mapping[str, int]
) -> int:
    """Seconds a suspended request waits: the tier's default, or the runtime's ttlSeconds within limits."""
    default = defaults.get(tier_key, defaults.get(HIGH, 900))
    if requested is None:
        return default
    maximum = maxima.get(tier_key, default)
    if not minimum <= requested <= maximum:
        raise ValueError(
            f"ttlSeconds: {requested} is outside {minimum}..{maximum} for tier {tier_key} "
            f"(omit it for the default of {default} s)"
        )
    return requested


def effective_state(state: str, expires_at: datetime, now: datetime) -> str:
    """A pending request past its expiry is expired, whether or not the beat task has marked it yet."""
    if state == State.PENDING and expires_at <= now:
        return State.EXPIRED.value
    return state


def consume_refusal(
    *,
    state: str,
    expires_at: datetime,
    consumable_until: datetime | None,
    approved_sha256: str | None,
    presented_sha256: str,
    now: datetime,
    tool_call_id: str = "",
    presented_tool_call_id: str = "",
) -> tuple[str, str] | None:
    """Why this consume must not succeed, as (code, message); None when it may.

    This is what stops a retried or replayed runtime call from executing twice, or executing
    arguments nobody approved.
    """
    current = effective_state(state, expires_at, now)
    if current == State.PENDING:
        return "not-decided", "the request is still pending: wait for the decision (GET ?wait=30) before consuming"
    if current == State.REJECTED:
        return "rejected", "the request was rejected: do not execute the call"
    if current == State.EXPIRED:
        return "expired", "the request expired without a decision: do not execute; submit a new request"
    if current == State.CANCELLED:
        return "cancelled", "the request was cancelled: do not execute"
    if current == State.CONSUMED:
        return "already-consumed", "this approval was already consumed: the call ran once and must not run again"
    if tool_call_id and presented_tool_call_id and presented_tool_call_id != tool_call_id:
        return (
            "tool-call-mismatch",
            f"this approval is for tool call {tool_call_id!r}, not {presented_tool_call_id!r}: "
            "another tool call needs its own approval request",
        )
    if presented_sha256 != approved_sha256:
        return (
            "args-mismatch",
            f"argsSha256 {presented_sha256} is not the hash of the approved arguments ({approved_sha256}): "
            "execute exactly approvedArgs (the approver may have edited them) and hash their canonical JSON",
        )
    if consumable_until is not None and consumable_until <= now:
        return "approval-lapsed", "the approval lapsed unused; submit a new request"
    return None


# --- replays ---------------------------------------------------------------------------------------

# What a replay must repeat, by its API name, with how a 409 says it differs. A retry sends the same call; any
# other difference is another call that reused the key, and answering it with the first request would hand it
# someone else's request (another patient's, another requester's).
REPLAY_FIELDS = {
    "tool": "a different tool",
    "args": "different arguments",
    "profile": "a different profile",
    "dispatchMode": "a different dispatchMode",
    "runId": "a different runId",
    "requestedBy": "a different requestedBy",
    "patientRef": "a different patientRef",
    "toolCallId": "a different toolCallId",
}


def replay_differences(first: Mapping[str, object], again: Mapping[str, object]) -> list[str]:
    """The REPLAY_FIELDS in which `again` differs from `first` (API names, in REPLAY_FIELDS' order)."""
    return [name for name in REPLAY_FIELDS if first.get(name) != again.get(name)]


def replay_conflict(key: str, first_tool: str, differs: list[str]) -> tuple[str, list[str]]:
    """The 409's message and per-field errors. It names the fields, never the first call's values: the caller
    may be someone else, and the first request's patient is not theirs to learn."""
    phrases = [REPLAY_FIELDS[name] for name in differs]
    listed = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    message = (
        f"idempotencyKey {key!r} was already used for {first_tool}; this call has {listed}: "
        "a new call needs a new idempotency key"
    )
    return message, [f"{name}: differs from the call this idempotencyKey was first used for" for name in differs]


# --- the candidate set the run was resolved with ----------------------------------------------------

CANDIDATE_SET_ID = re.compile(r"^cs_[0-9a-f]{32}$")  # catalog.domain.snapshot.candidate_set_id's shape


@dataclass(frozen=True)
class ServedSet:
    """A candidate set the resolve API served (catalog.models.CandidateSet), as the gate reads it."""

    set_id: str
    system: str
    profile: str
    tool_keys: frozenset[str]


def candidate_set_id_problem(value: str) -> str | None:
    """Why `value` cannot be a candidateSetId the resolve API gave out; None when it can."""
    if CANDIDATE_SET_ID.fullmatch(value):  # `$` alone would let a trailing newline through
        return None
    return (
        f"candidateSetId: {value[:40]!r} is not a candidate set id (`cs_` and 32 lower-case hex digits, as "
        "POST /api/v1/rag/resolve answers it); send it exactly as resolve gave it, or leave it out"
    )


def candidate_set_refusal(
    *, set_id: str, served: ServedSet | None, profile: str, tool_system: str, tool_key: str, tool: str = "the tool"
) -> PolicyOutcome | None:
    """A call that names its candidate set may only call a tool of that set, under the profile it was served for.
    A set the console does not know (never served, or no longer kept) vouches for nothing: refused (fail closed)."""
    if served is None:
        return PolicyOutcome(
            Decision.REFUSE,
            "unknown-candidate-set",
            f"candidate set {set_id} was never served by POST /api/v1/rag/resolve or is no longer kept: "
            "resolve the turn again and call a tool of the new set",
        )
    if served.profile != profile:
        return PolicyOutcome(
            Decision.REFUSE,
            "candidate-set-profile-mismatch",
            f"candidate set {set_id} was served for profile {served.profile}, not {profile}: resolve again under "
            f"profile {profile}",
        )
    if served.system != tool_system or tool_key not in served.tool_keys:
        return PolicyOutcome(
            Decision.REFUSE,
            "not-in-candidate-set",
            f"{tool} is not in candidate set {set_id} ({len(served.tool_keys)} tools of {served.system}) that the "
            "run was resolved with: the planner may only call the tools it was offered",
        )
    return None


# --- possible duplicates -----------------------------------------------------------------------------

POSSIBLE_DUPLICATE = "possible-duplicate"


@dataclass(frozen=True)
class Earlier:
    """An earlier call with the same tool, patient and canonical arguments: a request (request_id set) pending
    and still decidable or decided (DECIDED_STATES), or a call the gate allowed (remembered for the window)."""

    idempotency_key: str
    at: datetime
    request_id: str | None = None

    @property
    def short_id(self) -> str:
        return (self.request_id or "")[:8]


def duplicate_window_start(now: datetime, *, minutes: int, patient_ref: str) -> datetime | None:
    """Since when an earlier call counts as the same call; None when nothing is compared (no patient named, or
    the window is 0: the check is off)."""
    if not patient_ref or minutes <= 0:
        return None
    return now - timedelta(minutes=minutes)


def newest_earlier(
    requests: Sequence[Earlier], allowed: Sequence[Earlier], *, idempotency_key: str
) -> tuple[Earlier | None, bool]:
    """The newest earlier call under another idempotency key (a request before an allowed call: it can be
    shown), and whether an allowed call under this very key was seen (a retry of it, not a duplicate)."""
    retried = any(a.idempotency_key == idempotency_key for a in allowed)
    for rows in (requests, allowed):
        others = sorted((r for r in rows if r.idempotency_key != idempotency_key), key=lambda r: r.at, reverse=True)
        if others:
            return others[0], retried
    return None, retried


def duplicate_note(earlier: Earlier) -> str:
    if earlier.request_id:
        return f"possible duplicate of {earlier.short_id} (same tool, patient and arguments)"
    return (
        f"possible duplicate of the call allowed at {earlier.at.isoformat(timespec='seconds')} under "
        f"idempotencyKey {earlier.idempotency_key!r} (same tool, patient and arguments)"
    )


def with_duplicate(outcome: PolicyOutcome, earlier: Earlier | None, *, tool: str = "the tool") -> PolicyOutcome:
    """The gate's outcome for a call that repeats `earlier`: a tier-low operator call that would run suspends
    (a person looks at it first); a suspending call says what it repeats; anything else is unchanged."""
    if earlier is None or outcome.decision == Decision.REFUSE:
        return outcome
    if outcome.decision == Decision.ALLOW:
        if outcome.reason != TIER_LOW_OPERATOR:
            return outcome
        return PolicyOutcome(
            Decision.SUSPEND,
            POSSIBLE_DUPLICATE,
            f"{tool} is tier low and would run, but it is a {duplicate_note(earlier)}: an approver looks first",
            tier_key=LOW,
        )
    return replace(outcome, message=f"{outcome.message}; {duplicate_note(earlier)}")


# --- identities (four-eyes) ------------------------------------------------------------------------

# Letters of other scripts and separators that look like ASCII, mapped to what they pass for:
# catalog.domain.lookalikes (one table with the manipulation rule's). Requesters are names a runtime sends, so the
# letters that pass for Latin suffice.
_LOOKALIKES = LETTERS_AND_SEPARATORS
# After case folding `I` is `i`, which confusables.txt takes for `l` (as it does `1` and `|`); `0` passes for
# `o`, and `rn` for `m`. Folding them together can only make two names compare equal, which fails closed.
_ASCII_LOOKALIKES = str.maketrans("i1|0", "lllo")
# Invisible or decorating characters: format (zero-width space, joiners, bidi controls, soft hyphen), control,
# spaces and separators, and combining marks (`approver` with a combining acute is still them).
_DROPPED_CATEGORIES = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp", "Mn", "Me"})
_PREFIXES = re.compile(r"^(?:user:|usr:|mailto:|@)+")


@lru_cache(maxsize=4096)  # a queue page compares each row's requester with the same approver: 10-60 µs a name
def identity_key(name: str) -> str:
    """The form of a person's name that four-eyes compares: NFKC; combining marks, format, control and space
    characters dropped; look-alikes mapped to the letter they pass for (UTS #39 skeleton, for the scripts that
    pass for Latin); case folded; decorations removed (`Anna <anna@x.org>`, `user: anna`, `@anna`, `HOSP\\anna`,
    `anna@`, and an e-mail's domain: `anna@hospital.org` is `anna`). Two spellings that could be one person get
    one key; "" when nothing names anyone.
    """
    text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", name))
    text = "".join(ch for ch in text if unicodedata.category(ch) not in _DROPPED_CATEGORIES and not ch.isspace())
    text = unicodedata.normalize("NFKC", text.translate(_LOOKALIKES)).casefold().translate(_ASCII_LOOKALIKES)
    text = text.replace("rn", "m")
    if "<" in text and ">" in text.rpartition("<")[2]:  # a display name with an address: the address
        text = text.rpartition("<")[2].partition(">")[0]
    text = text.rpartition("\\")[2]
    return _PREFIXES.sub("", text).partition("@")[0]
