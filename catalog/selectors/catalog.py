"""Reads for the catalog browser: filters, sort keys, rows and facets, in fixed query counts.

Every function here runs a number of queries that does not depend on the catalog's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

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
            "safety_revision__config_changes",
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
        qs = qs.filter(owner__slug=f.owner)
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


def plan_eligible_q(profile_slug: str) -> Q:
    """Plan eligibility as a filter: business plane, and an allowed availability or an explicit include."""
    profile = CatalogProfile.objects.filter(slug=profile_slug).first()
    return plan_eligible_q_for(profile) if profile else Q(pk__in=[])


def catalog_facets() -> dict[str, list[str]]:
    """Values for the filter controls. Modules, teams and profiles are written by imports only (the admin shows
    them read-only), so they are kept per catalog version: one small query, then three to rebuild."""
    return _FACETS.get()


def _facets_of(version: Version) -> dict[str, list[str]]:
    return {
        "modules": list(Tool.objects.live().order_by("module").values_list("module", flat=True).distinct()),
        "teams": list(Team.objects.order_by("slug").values_list("slug", flat=True)),
        "profiles": list(CatalogProfile.objects.order_by("slug").values_list("slug", flat=True)),
        "systems": catalog_systems(),
    }


def catalog_systems() -> list[str]:
    """condor and tucan always (their pages name them before a first import), then each MCP server's catalog:
    one query on a table of one row per system."""
    return sorted({"condor", "tucan", *CatalogState.objects.values_list("system", flat=True)})


_FACETS = PerCatalogVersion(_facets_of)


def plan_eligible_q_for(profile: CatalogProfile) -> Q:
    return Q(plane="business") & (
        Q(availability__in=profile.availabilities) | Q(system=profile.system, declared_id__in=profile.includes)
    )
