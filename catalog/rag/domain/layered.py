"""A read-only mapping made from another by a few changes, in the time of the changes rather than of the mapping.

The resolve index keeps per-key values (tools by key, manifest lines, eligibility per profile) for every tool of
a catalog; after an import that changed ten of 50,000 tools, copying each such dict cost more than the rest of the
update. `layered(base, changes, gone)` is `base` with `changes` set and `gone` dropped: one layer over a plain
dict (a layer over a layer merges into one), flattened into a plain dict once its changes pass an eighth of the
base, so lookups stay one or two dict lookups and repeated updates never pile up layers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")
_MISSING: Any = object()
FLATTEN_FRACTION = 8  # a layer holding more than 1/8 of its base's size is flattened into a dict


class Layered(Mapping[K, V]):
    """`base` (a plain dict) with the keys of `top` set to its values and the keys of `gone` dropped."""

    __slots__ = ("base", "top", "gone", "size")

    def __init__(self, base: Mapping[K, V], top: dict[K, V], gone: frozenset[K]) -> None:
        self.base, self.top, self.gone = base, top, gone
        self.size = len(base) - len(gone) + sum(1 for key in top if key not in base)

    def __getitem__(self, key: K) -> V:
        value = self.top.get(key, _MISSING)
        if value is not _MISSING:
            return value
        if key in self.gone:
            raise KeyError(key)
        return self.base[key]

    def get(self, key: K, default: Any = None) -> Any:
        value = self.top.get(key, _MISSING)
        if value is not _MISSING:
            return value
        return default if key in self.gone else self.base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.top or (key not in self.gone and key in self.base)

    def __iter__(self) -> Iterator[K]:
        yield from self.top
        for key in self.base:
            if key not in self.top and key not in self.gone:
                yield key

    def __len__(self) -> int:
        return self.size


def layered(base: Mapping[K, V], changes: Iterable[tuple[K, V]], gone: Iterable[K] = ()) -> Mapping[K, V]:
    """`base` with `gone` dropped, then `changes` set (a key in both is set)."""
    if isinstance(base, Layered):
        root, top, dropped = base.base, dict(base.top), set(base.gone)
    else:
        root, top, dropped = base, {}, set()
    for key in gone:
        top.pop(key, None)
        if key in root:
            dropped.add(key)
    for key, value in changes:
        top[key] = value
        dropped.discard(key)
    if (len(top) + len(dropped)) * FLATTEN_FRACTION > len(root):
        flat = {key: value for key, value in root.items() if key not in dropped}
        flat.update(top)
        return flat
    return Layered(root, top, frozenset(dropped))
