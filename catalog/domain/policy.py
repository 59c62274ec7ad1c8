"""Policy derivations: the one mutating predicate, effective policy class and retry class."""

from __future__ import annotations

from catalog.domain.vocabulary import PolicyClass, RetryClass


def is_mutating(*, mutating: bool, policy_class: str | None) -> bool:
    """The mutating predicate every derivation uses.

    A tool mutates when it says so, or when it declares the `mutate` policy class. Keep this the only
    definition: the seed's retry module once kept a mirror of it and a one-sided edit re-enabled retry.
    """
    return bool(mutating) or policy_class == PolicyClass.MUTATE


def effective_policy_class(*, mutating: bool, policy_class: str | None) -> str:
    """Declared class, else the factory's stamping fallback: `mutate` when mutating, else `read`."""
    if policy_class:
        return policy_class
    return PolicyClass.MUTATE.value if mutating else PolicyClass.READ.value


def effective_retry_class(*, mutating: bool, policy_class: str | None, retry_class: str) -> str:
    """`none` for every mutating tool, whatever it declares.

    A mutating call whose write landed but whose response timed out looks like one that never landed;
    retrying it writes twice (a duplicate prescription, a duplicate charge).
    """
    if is_mutating(mutating=mutating, policy_class=policy_class):
        return RetryClass.NONE.value
    return retry_class
