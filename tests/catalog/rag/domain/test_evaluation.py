"""Recall@k and MRR over ranked retrievals, checked against figures worked out by hand."""

from __future__ import annotations

import pytest

from catalog.rag.domain.evaluation import Failure, Miss, RankedCase, evaluate

TEN = [f"tool{i}" for i in range(1, 11)]  # tool1 … tool10, tool1 ranked first


def test_expected_tool_at_rank_one_scores_perfectly() -> None:
    scores = evaluate([RankedCase("a", ["listVitals", "recordVitals"], ["listVitals"])])
    assert scores.cases == 1
    assert scores.recall == {1: 1.0, 5: 1.0, 10: 1.0}
    assert scores.mrr == 1.0
    assert scores.failures == []


def test_recall_and_mrr_average_over_cases_by_hand() -> None:
    cases = [
        RankedCase("hit-at-3", TEN, ["tool3"]),  # r@1 0, r@5 1, r@10 1, rr 1/3
        RankedCase("hit-at-7", TEN, ["tool7"]),  # r@1 0, r@5 0, r@10 1, rr 1/7
        RankedCase("missing", TEN, ["elsewhere"]),  # all 0, rr 0
        RankedCase("hit-at-1", TEN, ["tool1"]),  # all 1, rr 1
    ]
    scores = evaluate(cases)
    assert scores.recall[1] == pytest.approx(1 / 4)
    assert scores.recall[5] == pytest.approx(2 / 4)
    assert scores.recall[10] == pytest.approx(3 / 4)
    assert scores.mrr == pytest.approx((1 / 3 + 1 / 7 + 0 + 1) / 4)


def test_two_expected_tools_count_as_fractions_and_mrr_takes_the_first_found() -> None:
    # expected at ranks 2 and 6: r@1 0, r@5 1/2, r@10 2/2; reciprocal rank of the first found is 1/2
    scores = evaluate([RankedCase("multi", TEN, ["tool6", "tool2"])])
    assert scores.recall == {1: 0.0, 5: 0.5, 10: 1.0}
    assert scores.mrr == pytest.approx(0.5)
    assert scores.failures == [Failure("multi", (Miss("tool6", 6),))]


def test_failures_keep_the_rank_they_got_or_none() -> None:
    scores = evaluate(
        [RankedCase("late", TEN, ["tool8"]), RankedCase("absent", TEN, ["nowhere", "tool1"])],
        failure_k=5,
    )
    assert scores.failures == [
        Failure("late", (Miss("tool8", 8),)),
        Failure("absent", (Miss("nowhere", None),)),
    ]


def test_failure_cut_off_is_configurable() -> None:
    cases = [RankedCase("third", TEN, ["tool3"])]
    assert evaluate(cases, failure_k=5).failures == []
    assert evaluate(cases, failure_k=1).failures == [Failure("third", (Miss("tool3", 3),))]


def test_spellings_of_one_tool_compare_equal() -> None:
    scores = evaluate([RankedCase("a", ["show_modal", "visit-recording-card"], ["visitRecordingCard"])])
    assert scores.recall[1] == 0.0
    assert scores.recall[5] == 1.0
    assert scores.mrr == pytest.approx(0.5)


def test_a_tool_retrieved_twice_under_two_spellings_counts_once() -> None:
    # show-modal and show_modal fold together, so target moves up to rank 2, not 3
    scores = evaluate([RankedCase("a", ["show-modal", "show_modal", "target"], ["target"])])
    assert scores.mrr == pytest.approx(0.5)


def test_expected_spelt_twice_is_one_expected_tool() -> None:
    scores = evaluate([RankedCase("a", ["listVitals"], ["listVitals", "list-vitals"])])
    assert scores.recall[1] == 1.0


def test_only_the_requested_ks_are_reported() -> None:
    scores = evaluate([RankedCase("a", TEN, ["tool3"])], ks=(3,))
    assert scores.recall == {3: 1.0}
    assert scores.recall_at(3) == 1.0


def test_a_case_without_expected_tools_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="case empty: no expected tool ids"):
        evaluate([RankedCase("empty", TEN, [])])


def test_no_cases_is_refused() -> None:
    with pytest.raises(ValueError, match="no cases"):
        evaluate([])


def test_k_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        evaluate([RankedCase("a", TEN, ["tool1"])], ks=(0,))
