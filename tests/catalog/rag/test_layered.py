"""`layered`: a mapping made from another by a few changes answers exactly as the dict those changes make, after
any run of updates, and never piles layers up."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from catalog.rag.domain.layered import FLATTEN_FRACTION, Layered, layered


@pytest.mark.parametrize("seed", range(20))
def test_a_run_of_small_updates_answers_as_the_dict_they_make(seed: int) -> None:
    rng = random.Random(seed)
    expected: dict[str, object] = {f"k{n}": n for n in range(rng.randint(0, 400))}
    mapping: Mapping[str, object] = dict(expected)
    for step in range(60):
        keys = [f"k{rng.randint(0, 500)}" for _ in range(rng.randint(0, 6))]
        gone = [f"k{rng.randint(0, 500)}" for _ in range(rng.randint(0, 4))]
        changes: list[tuple[str, object]] = [(key, f"{step}:{key}") for key in keys]
        for key in gone:
            expected.pop(key, None)
        expected.update(changes)
        mapping = layered(mapping, changes, gone)
        assert dict(mapping) == expected
        assert len(mapping) == len(expected)
        for probe in (f"k{rng.randint(0, 500)}" for _ in range(30)):
            assert (probe in mapping) == (probe in expected)
            assert mapping.get(probe, "none") == expected.get(probe, "none")
        if isinstance(mapping, Layered):
            assert not isinstance(mapping.base, Layered)  # one layer at most
            assert (len(mapping.top) + len(mapping.gone)) * FLATTEN_FRACTION <= len(mapping.base)


def test_a_dropped_key_is_missing_and_a_key_set_again_is_back() -> None:
    base = {f"k{n}": n for n in range(100)}
    dropped = layered(base, [], ["k1"])
    assert isinstance(dropped, Layered) and "k1" not in dropped and len(dropped) == 99
    with pytest.raises(KeyError):
        dropped["k1"]
    back = layered(dropped, [("k1", "again")])
    assert back["k1"] == "again" and len(back) == 100 and base["k1"] == 1  # the base is never written


def test_changes_past_an_eighth_of_the_base_are_flattened_into_a_dict() -> None:
    base = {n: n for n in range(80)}
    assert isinstance(layered(base, [(n, -n) for n in range(10)]), Layered)
    flat = layered(base, [(n, -n) for n in range(11)])
    assert type(flat) is dict and flat[3] == -3 and flat[50] == 50
