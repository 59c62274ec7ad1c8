"""Owner lookup: any spelling of a tool id → the owning team, at once.

Exact spellings (declared id, canonical key, LLM name, alias) resolve through the canonical key; anything
else gets "did you mean" candidates ranked by canonical-key similarity (rapidfuzz). The key index is
cached in memory per catalog revision, so a lookup is two small queries whatever the catalog size.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from catalog.core.cache import PerCatalogVersion, Version
from catalog.domain.keys import canonical_key
from catalog.domain.mcp import client_spellings
from catalog.domain.vocabulary import mcp_server_of
from catalog.models import Tool

MIN_SCORE = 60.0


@dataclass
class _Index:
    version: Version
    keys: list[str]  # distinct canonical keys (ids and aliases), for fuzzy ranking
    spaced: list[str]  # the same keys with dots as spaces, what the fuzzy scorer compares
    tools_by_key: dict[str, list[tuple[int, str]]]  # key → [(tool pk, how it matched)]


@dataclass
class Lookup:
    query: str
    key: str
    matches: list[tuple[Tool, str]] = field(default_factory=list)  # exact: (tool, "declared id" | "alias" …)
    candidates: list[tuple[Tool, float]] = field(default_factory=list)  # near misses with their score

    @property
    def found(self) -> bool:
        return bool(self.matches)


def _build_index(version: Version) -> _Index:
    tools_by_key: dict[str, list[tuple[int, str]]] = {}
    rows = Tool.objects.live().values_list("pk", "canonical_key", "aliases", "system", "declared_id")
    for pk, key, aliases, system, declared_id in rows:
        tools_by_key.setdefault(key, []).append((pk, "canonical key"))
        for alias in aliases or []:
            alias_key = canonical_key(alias)
            if alias_key != key:
                tools_by_key.setdefault(alias_key, []).append((pk, f"alias {alias!r}"))
        server = mcp_server_of(system)
        # An MCP tool is also found by the names MCP clients give it (`mcp__time__get_current_time`, …).
        for spelling in client_spellings(server, declared_id)[1:] if server else ():
            client_key = canonical_key(spelling)
            if client_key != key and (pk, "MCP client name") not in tools_by_key.get(client_key, []):
                tools_by_key.setdefault(client_key, []).append((pk, "MCP client name"))
    keys = sorted(tools_by_key)
    return _Index(version=version, keys=keys, spaced=[k.replace(".", " ") for k in keys], tools_by_key=tools_by_key)


_INDEX = PerCatalogVersion(_build_index)


def owner_lookup(query: str, *, limit: int = 5) -> Lookup:
    key = canonical_key(query or "")
    result = Lookup(query=query, key=key)
    if not key:
        return result
    index = _INDEX.get()
    exact = index.tools_by_key.get(key, [])
    ranked: list[tuple[str, float]] = []
    if not exact:
        # Keys compared as words (dots as spaces, sorted): a swapped word order costs nothing, typos little.
        hits = process.extract(
            key.replace(".", " "),
            index.spaced,
            scorer=fuzz.token_sort_ratio,
            limit=limit,
            score_cutoff=MIN_SCORE,
        )
        ranked = [(index.keys[i], score) for _, score, i in hits]
    wanted = {pk for pk, _ in exact} | {pk for k, _ in ranked for pk, _ in index.tools_by_key[k]}
    tools = _tools_by_pk(wanted)
    result.matches = [(tools[pk], how) for pk, how in exact if pk in tools]
    seen: set[int] = set()
    for k, score in ranked:
        for pk, _ in index.tools_by_key[k]:
            if pk in tools and pk not in seen:
                seen.add(pk)
                result.candidates.append((tools[pk], score))
    return result


def _tools_by_pk(pks: set[int]) -> dict[int, Tool]:
    """The matched tools with owner and rule, by primary key: one query."""
    return Tool.objects.select_related("owner", "owner_rule").in_bulk(pks)


def closest_tools(names: Iterable[str]) -> dict[str, tuple[Tool, float]]:
    """For a whole page of names at once: each name's closest live tool by the owner lookup's matching (an exact
    spelling scores 100, else the best canonical-key similarity at or above MIN_SCORE), with owner and rule. Names
    nothing comes close to are left out. Two queries (the catalog version, the tools) whatever the page size."""
    index = _INDEX.get()
    best: dict[str, tuple[int, float]] = {}
    for name in dict.fromkeys(names):
        key = canonical_key(name or "")
        if not key:
            continue
        exact = index.tools_by_key.get(key)
        if exact:
            best[name] = (exact[0][0], 100.0)
            continue
        hit = process.extractOne(
            key.replace(".", " "), index.spaced, scorer=fuzz.token_sort_ratio, score_cutoff=MIN_SCORE
        )
        if hit is not None:
            _, score, i = hit
            best[name] = (index.tools_by_key[index.keys[i]][0][0], float(score))
    tools = _tools_by_pk({pk for pk, _ in best.values()}) if best else {}
    return {name: (tools[pk], score) for name, (pk, score) in best.items() if pk in tools}
