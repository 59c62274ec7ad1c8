from __future__ import annotations

import itertools

import pytest

from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating

CLASSES = (None, "read", "mutate")


@pytest.mark.parametrize(("mutating", "policy_class"), list(itertools.product((False, True), CLASSES)))
def test_mutating_predicate(mutating: bool, policy_class: str | None) -> None:
    assert is_mutating(mutating=mutating, policy_class=policy_class) == (mutating or policy_class == "mutate")


@pytest.mark.parametrize(
    ("mutating", "policy_class", "expected"),
    [
        (False, None, "read"),  # fallback: not mutating reads as read
        (True, None, "mutate"),  # fallback: mutating without a class is stamped mutate
        (False, "read", "read"),
        (True, "mutate", "mutate"),
        (False, "mutate", "mutate"),  # declared class wins
        (True, "read", "read"),  # declared class wins (the importer refuses this pair for Condor)
    ],
)
def test_effective_policy_class(mutating: bool, policy_class: str | None, expected: str) -> None:
    assert effective_policy_class(mutating=mutating, policy_class=policy_class) == expected


@pytest.mark.parametrize(
    ("mutating", "policy_class", "retry_class"), list(itertools.product((False, True), CLASSES, ("none", "transient")))
)
def test_effective_retry_is_none_for_every_mutating_tool(
    mutating: bool, policy_class: str | None, retry_class: str
) -> None:
    effective = effective_retry_class(mutating=mutating, policy_class=policy_class, retry_class=retry_class)
    if mutating or policy_class == "mutate":
        assert effective == "none"
    else:
        assert effective == retry_class
