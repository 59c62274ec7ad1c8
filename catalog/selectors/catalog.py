"""Reads for the catalog browser: filters, sort keys, rows and facets, in fixed query counts.

Every function here runs a number of queries that does not depend on the catalog's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, overload

from django.db import connection
from django.db.models import Count, Q, QuerySet, Subquery

from catalog.core.cache import PerCatalogVersion, Version
from catalog.domain.keys import canonical_key
from catalog.domain.ownership import UNOWNED
from catalog.domain.vocabulary import ReviewState
from catalog.models import (
    CatalogProfile,
    CatalogState,
    Team,
    Tool,
)
from catalog.models.catalog import SORTED_BY
from catalog.selectors.served import ServedProfile, served_profile
from catalog.usage.selectors.health import called_recently

# Sort keys the catalog accepts (the URL names them; a leading "-" sorts descending). Each ends in (declared_id,
# system), unique per tool, so pages never overlap; every key but "owner" (the team's slug) reads an index of its
# own in order (Tool.Meta.indexes, SORTED_BY), so a deep page costs about what page 1 does.
SORTS: dict[str, tuple[str, ...]] = {
    **{name: (*columns, "declared_id", "system") for name, columns in SORTED_BY.items()},
    "system": ("system", "declared_id"),
    "owner": ("owner__slug", "declared_id", "system"),
}


@dataclass(frozen=True)
class CatalogFilters:
    q: str = ""
    system: str = ""
    plane: str = ""
    module: str = ""
    owner: str = ""  # team slug, or "-" for unowned
    availability: str = ""
    policy: str = ""
    mutating: bool | None = None
    hitl: str = ""  # high, low, or "none"
    retry: str = ""
    profile: str = ""  # plan-eligible under this profile
    findings: str = ""  # "error", "any", "none"
    signed_off: bool | None = None
    calls: str = ""  # "none": no call in the last CONDOR_USAGE_DEAD_DAYS days (dead), "some": at least one
    sort: str = "id"


@cache
def _annotated_live_tools_once() -> QuerySet[Any]:  # Tool rows with two annotations the stubs cannot name
    """The live tools with what the table shows, findings counted. Built once per process and cloned per use
    (never evaluated itself): resolving the two counting subqueries took a fifth of the catalog page's CPU."""
    return (
        Tool.objects.live()
        .select_related("owner", "safety_revision")
        # The table shows axes, not texts: skip the long text and JSON columns (decoding them per row
        # cost more than the rest of the page), and the revision's config diff.
        .defer(
            "description",
            "rag_description",
            "rag_keywords",
            "instruction_fragment",
            "styling_fragment",
            "output_instructions",
            "aliases",
            "input_schema",
            "metadata_ref",
            "source_path",
            "search_text",
            # The revision's lists of findings it added and cleared: every finding of a first import (50,000
            # tools: megabytes), decoded per row of a team page (240 of its 640 ms) and of an export.
            "safety_revision__config_changes",
            "safety_revision__findings_added",
            "safety_revision__findings_cleared",
        )
    )


def catalog_tools(filters: CatalogFilters) -> QuerySet[Tool]:
    """The live catalog, filtered and sorted, with findings counts: one query per page (plus the count)."""
    qs = _annotated_live_tools_once().all()  # a clone
    f = filters
    if f.q:
        qs = qs.filter(search_q(f.q))
    for name, column in (
        ("system", "system"),
        ("plane", "plane"),
        ("module", "module"),
        ("availability", "availability"),
        ("policy", "effective_policy_class"),
        ("retry", "effective_retry_class"),
    ):
        value = getattr(f, name)
        if value:
            qs = qs.filter(**{column: value})
    if f.owner == UNOWNED:
        qs = qs.filter(owner__isnull=True)
    elif f.owner:
        # The team's id as a value (a subquery PostgreSQL runs first), not a join on its slug: with the value the
        # planner reads the team's tools from tool_live_owner_idx in order; with the join it walked the whole
        # catalog's id index to find a team's first 100 tools (95 ms at 50,000 tools, 0.3 ms so).
        qs = qs.filter(owner=Subquery(Team.objects.filter(slug=f.owner).values("pk")[:1]))
    if f.mutating is not None:
        qs = qs.filter(is_mutating=f.mutating)
    if f.hitl == "none":
        qs = qs.filter(hitl_tier__isnull=True)
    elif f.hitl:
        qs = qs.filter(hitl_tier=f.hitl)
    if f.profile:
        qs = qs.filter(plan_eligible_q(f.profile))
    if f.findings == "error":
        qs = qs.filter(error_count__gt=0)
    elif f.findings == "any":
        qs = qs.filter(findings_count__gt=0)
    elif f.findings == "none":
        qs = qs.filter(findings_count=0)
    if f.signed_off is True:
        qs = qs.filter(safety_revision__review_state=ReviewState.APPROVED.value)
    elif f.signed_off is False:
        qs = qs.exclude(safety_revision__review_state=ReviewState.APPROVED.value)
    if f.calls:
        called = called_recently()
        qs = qs.filter(~called if f.calls == "none" else called)
    descending = f.sort.startswith("-")
    columns = SORTS.get(f.sort.lstrip("-"), SORTS["id"])
    return qs.order_by(*(f"-{c}" if descending else c for c in columns))


def search_q(q: str) -> Q:
    """A substring of the tool id, the descriptions or the keywords, any case; or any spelling of a tool id (its
    canonical key). On PostgreSQL one column holding all of them (Tool.search_text) has a trigram index, so a search
    reads the index instead of every row; SQLite compares the columns themselves."""
    text = q.strip()
    folded = canonical_key(text)
    if connection.vendor == "postgresql":
        match = Q(search_text__icontains=text)
        if folded:
            match |= Q(search_text__icontains=folded)
        return match
    match = (
        Q(declared_id__icontains=text)
        | Q(description__icontains=text)
        | Q(rag_description__icontains=text)
        | Q(rag_keywords__icontains=text)
    )
    if folded:
        match |= Q(canonical_key__contains=folded)
    return match


# The catalog table's columns: its rows are plain dicts (no model instances to build, and a template finds a
# dict's keys faster than an instance's attributes): reading a page of rows took 6.5 ms of CPU instead of 10.
TABLE_COLUMNS = (
    "system",
    "declared_id",
    "plane",
    "module",
    "owner__slug",
    "availability",
    "policy_class",
    "effective_policy_class",
    "is_mutating",
    "hitl_tier",
    "retry_class",
    "effective_retry_class",
    "findings_count",
    "error_count",
    "safety_revision__review_state",
)


def catalog_rows(filters: CatalogFilters) -> QuerySet[Tool, dict[str, Any]]:
    """catalog_tools as the table's rows: one dict per tool with TABLE_COLUMNS."""
    return catalog_tools(filters).values(*TABLE_COLUMNS)


def catalog_keys(filters: CatalogFilters) -> QuerySet[Tool, int]:
    """The ids of catalog_tools in its order: what a page reads first (see CatalogRows)."""
    return catalog_tools(filters).values_list("pk", flat=True)


class CatalogRows:
    """The table's rows for Django's Paginator (which counts with `count()` and reads a page with a slice).

    A page is read in two steps: the ids of the page from the sort's index alone (`tool_live_<sort>_idx` holds the
    sort key and the id, so OFFSET walks the index without touching the table), then those 50 rows with their
    owner and sign-off by id. Read in one query, the joins ran for every row skipped: a deep page cost a walk of
    the table and two joins per skipped row. The unfiltered catalog (or one system of it) is counted from the kept
    figure: counting 50,000 live rows took 16-27 ms per page; any other filter counts for real."""

    def __init__(self, filters: CatalogFilters, kept: KeptCatalog) -> None:
        self.filters = filters
        self._kept = kept

    def count(self) -> int:
        f = self.filters
        if f == CatalogFilters(system=f.system, sort=f.sort):
            return self._kept.live.get(f.system, 0) if f.system else sum(self._kept.live.values())
        return catalog_tools(f).count()

    def __len__(self) -> int:
        return self.count()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # Paginator reads pages by slice and never iterates; the sequence protocol it is typed against wants this.
        return iter(self[0 : self.count()])

    @overload
    def __getitem__(self, page: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, page: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, page: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(page, int):
            return self[page : page + 1][0]
        keys = list(catalog_keys(self.filters)[page])
        if not keys:
            return []
        rows = {row["pk"]: row for row in Tool.objects.filter(pk__in=keys).values("pk", *TABLE_COLUMNS)}
        return [rows[pk] for pk in keys if pk in rows]


def plan_eligible_q(profile_slug: str) -> Q:
    """Plan eligibility as a filter: business plane, and an allowed availability or an explicit include."""
    profile = served_profile(profile_slug)
    return plan_eligible_q_for(profile) if profile else Q(pk__in=[])


@dataclass(frozen=True)
class KeptCatalog:
    """What the catalog browser keeps per catalog version: the filter controls' values and the live tools per
    system. Modules, teams, profiles and which tools are live are written by imports only (the admin shows them
    read-only), so one small query a page checks them, and four rebuild them after an import."""

    facets: dict[str, list[str]]
    live: dict[str, int]


def catalog_kept() -> KeptCatalog:
    return _KEPT.get()


def catalog_facets() -> dict[str, list[str]]:
    """Values for the filter controls (kept per catalog version, see KeptCatalog)."""
    return _KEPT.get().facets


def _kept_of(version: Version) -> KeptCatalog:
    facets = {
        "modules": list(Tool.objects.live().order_by("module").values_list("module", flat=True).distinct()),
        "teams": list(Team.objects.order_by("slug").values_list("slug", flat=True)),
        "profiles": list(CatalogProfile.objects.order_by("slug").values_list("slug", flat=True)),
        "systems": catalog_systems(),
    }
    live = Tool.objects.live().values("system").annotate(n=Count("pk")).order_by()
    return KeptCatalog(facets=facets, live={row["system"]: row["n"] for row in live})


def catalog_systems() -> list[str]:
    """condor and tucan always (their pages name them before a first import), then each MCP server's catalog:
    one query on a table of one row per system."""
    return sorted({"condor", "tucan", *CatalogState.objects.values_list("system", flat=True)})


def imported_catalog_systems() -> list[str]:
    """The systems with a catalog in effect (at least one import): unlike `catalog_systems`, not condor and tucan
    before their first import."""
    return sorted(CatalogState.objects.filter(current_revision__isnull=False).values_list("system", flat=True))


_KEPT = PerCatalogVersion(_kept_of)


def plan_eligible_q_for(profile: ServedProfile) -> Q:
    """Plan eligibility under a profile as it is served (catalog.selectors.served: a clinical profile's widening
    waits for sign-off)."""
    return Q(plane="business") & (
        Q(availability__in=profile.availabilities) | Q(system=profile.system, declared_id__in=profile.includes)
    )
