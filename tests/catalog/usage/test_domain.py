"""The pure parts: spans read into executions, histograms, the runtime safety checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from catalog.usage.domain import histogram
from catalog.usage.domain.rollup import ERROR_TYPES_MAX, merge_error_types
from catalog.usage.domain.safety import Served, ToolRef, approval_needed, candidate_set_problem, stamp_mismatch
from catalog.usage.domain.spans import RawSpan, read_span

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
OLDEST = NOW - timedelta(days=30)


def span(**attrs: object) -> RawSpan:
    start = int((NOW - timedelta(seconds=5)).timestamp() * 1e9)
    base = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "prescribeMedication"}
    base.update(attrs)
    return RawSpan(
        "spans[0]",
        "execute_tool",
        "ab" * 16,
        "cd" * 8,
        start,
        start + 12_500_000,
        0,
        "",
        base,
        {"service.name": "mastra"},
    )


def test_an_execute_tool_span_reads_as_an_execution_with_its_condor_stamps():
    reading = read_span(
        span(**{"condor.policy_class": "read", "condor.retry.attempt": 2, "gen_ai.tool.call.id": "c1"}),
        now=NOW,
        oldest=OLDEST,
    )
    e = reading.execution
    assert e is not None and not reading.problem
    assert (e.tool_name, e.tool_call_id, e.attempt, e.service, e.stamped) == (
        "prescribeMedication",
        "c1",
        2,
        "mastra",
        {"policy_class": "read"},
    )
    assert e.duration_ms == pytest.approx(12.5)


def test_other_spans_are_ignored_but_a_dropped_ui_action_is_kept_from_any_span():
    reading = read_span(
        span(**{"gen_ai.operation.name": "chat", "condor.ui.dropped_action": "open_panel"}), now=NOW, oldest=OLDEST
    )
    assert reading.execution is None and reading.dropped_action == "open_panel" and not reading.problem


@pytest.mark.parametrize(
    ("attrs", "said"),
    [
        ({"gen_ai.tool.name": None}, "without gen_ai.tool.name"),
        ({"gen_ai.tool.name": "x" * 201}, "gen_ai.tool.name: 201 characters; at most 200"),
        ({"gen_ai.tool.call.id": 7}, "gen_ai.tool.call.id must be a string, not int"),
        ({"condor.retry.attempt": True}, "condor.retry.attempt must be an integer"),
        ({"condor.profile": "a\nb"}, "control characters"),
    ],
)
def test_a_bad_attribute_refuses_the_span_naming_it_and_where(attrs: dict[str, object], said: str):
    reading = read_span(span(**attrs), now=NOW, oldest=OLDEST)
    assert reading.execution is None and reading.problem.startswith("spans[0]: ") and said in reading.problem


def test_spans_outside_the_retained_window_or_far_ahead_are_refused():
    old = read_span(span(), now=NOW + timedelta(days=31), oldest=OLDEST + timedelta(days=31))
    ahead = read_span(span(), now=NOW - timedelta(hours=1), oldest=OLDEST)
    assert "before the retained window" in old.problem and "ahead of the console's clock" in ahead.problem


def test_histogram_quantiles_interpolate_inside_their_bucket():
    counts = histogram.empty()
    for ms in [1, 2, 3, 4, 30, 30, 30, 30, 30, 900]:
        counts[histogram.bucket_of(ms)] += 1
    assert histogram.bucket_of(5) == 0 and histogram.bucket_of(5.01) == 1  # upper bounds inclusive
    assert 25 < histogram.quantile(counts, 0.5) <= 50
    assert 750 < histogram.quantile(counts, 0.95) <= 1000
    assert histogram.quantile(histogram.empty(), 0.5) is None
    assert histogram.merged([counts, counts])[0] == 8


def test_error_types_stay_bounded():
    merged = merge_error_types({f"e{i}": 1 for i in range(ERROR_TYPES_MAX)}, {"new": 3, "e1": 1})
    assert merged["other"] == 3 and merged["e1"] == 2 and len(merged) == ERROR_TYPES_MAX + 1


MUTATE_HIGH = Served(policy_class="mutate", hitl_tier="high", retry_class="none", mutating=True)


def test_stamps_are_compared_with_what_is_in_effect_only_where_stamped():
    assert stamp_mismatch({}, MUTATE_HIGH) == []
    assert stamp_mismatch({"policy_class": "mutate", "hitl_tier": "HIGH"}, MUTATE_HIGH) == []
    assert stamp_mismatch({"policy_class": "read", "hitl_tier": "none"}, MUTATE_HIGH) == [
        "condor.hitl_tier stamped 'none', in effect 'high'",
        "condor.policy_class stamped 'read', in effect 'mutate'",
    ]


def test_approval_is_needed_for_tier_high_and_ungated_mutations_under_clinical_profiles():
    assert approval_needed(MUTATE_HIGH, clinical=True) == "tier high"
    assert approval_needed(MUTATE_HIGH, clinical=False) is None
    ungated = Served(policy_class="mutate", hitl_tier=None, retry_class="none", mutating=True)
    assert approval_needed(ungated, clinical=True) == "a mutation without a HITL tier"
    low = Served(policy_class="mutate", hitl_tier="low", retry_class="none", mutating=True)
    assert approval_needed(low, clinical=True) is None


def test_a_business_tool_outside_its_candidate_set_is_named():
    ref = ToolRef(1, "condor", "prescribeMedication", "prescribe.medication", "business", MUTATE_HIGH, MUTATE_HIGH)
    e = read_span(span(**{"condor.candidate_set_id": "cs_" + "0" * 32}), now=NOW, oldest=OLDEST).execution
    assert e is not None
    assert candidate_set_problem(ref, e, ["prescribe.medication"]) is None
    assert "was not in candidate set" in (candidate_set_problem(ref, e, ["list.active.medications"]) or "")
    assert "never served" in (candidate_set_problem(ref, e, None) or "")
