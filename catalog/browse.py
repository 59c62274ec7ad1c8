"""Reads for the catalog browser, the tool page, teams and the dashboard: fixed query counts.

Every function here runs a number of queries that does not depend on the catalog's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from .domain.budget import ManifestLine, manifest_line_of
from .domain.keys import canonical_key
from .domain.metadata import metadata_v2
from .domain.profiles import is_plan_eligible
from .domain.vocabulary import ReviewState
from .models import (
    Agent,
    CatalogProfile,
    CatalogRevision,
    Finding,
    OwnershipRule,
    Team,
    Tool,
    ToolChange,
)
from .rag.vectors import embedding_status
from .selectors import UNOWNED, PerCatalogVersion, Version
from .services.findings import descriptor_of

# Sort keys the catalog accepts (the URL names them; a leading "-" sorts descending).
SORTS: dict[str, tuple[str, ...]] = {
    "id": ("declared_id", "system"),
    "system": ("system", "declared_id"),
    "plane": ("plane", "declared_id"),
    "module": ("module", "declared_id"),
    "owner": ("owner__slug", "declared_id"),
    "availability": ("availability", "declared_id"),
    "policy": ("effective_policy_class", "declared_id"),
    "mutating": ("is_mutating", "declared_id"),
    "hitl": ("hitl_tier", "declared_id"),
    "retry": ("effective_retry_class", "declared_id"),
    "findings": ("findings_count", "declared_id"),
}


def _count_of(queryset: QuerySet[Any]) -> Coalesce:
    counted = queryset.order_by().values("tool").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


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
            "safety_revision__config_changes",
        )
        .annotate(
            findings_count=_count_of(Finding.objects.filter(tool=OuterRef("pk"))),
            error_count=_count_of(Finding.objects.filter(tool=OuterRef("pk"), severity="error")),
        )
    )


def catalog_tools(filters: CatalogFilters) -> QuerySet[Tool]:
    """The live catalog, filtered and sorted, with findings counts: one query per page (plus the count)."""
    qs = _annotated_live_tools_once().all()  # a clone
    f = filters
    if f.q:
        text = f.q.strip()
        folded = canonical_key(text)
        match = (
            Q(declared_id__icontains=text)
            | Q(description__icontains=text)
            | Q(rag_description__icontains=text)
            | Q(rag_keywords__icontains=text)
        )
        if folded:
            match |= Q(canonical_key__contains=folded)
        qs = qs.filter(match)
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
    }


_FACETS = PerCatalogVersion(_facets_of)


# --- the tool page -----------------------------------------------------------------------------------


@dataclass
class ToolPage:
    tool: Tool
    manifest_line: ManifestLine
    eligibility: list[tuple[CatalogProfile, bool]]
    agents: list[Agent]
    changes: list[ToolChange]
    spellings: list[tuple[Any, str]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)  # CondorToolMetadataV2, the derived projection


def tool_page(system: str, declared_id: str) -> ToolPage:
    """Everything the tool page shows, in a fixed number of queries. Raises Tool.DoesNotExist."""
    tool = Tool.objects.select_related(
        "owner", "owner_rule", "safety_revision", "first_revision", "last_changed_revision", "retired_in"
    ).get(system=system, declared_id=declared_id)
    profiles = list(CatalogProfile.objects.order_by("slug"))
    eligibility = [
        (
            p,
            is_plan_eligible(
                plane=tool.plane,
                availability=tool.availability,
                declared_id=tool.declared_id if p.system == tool.system else "",
                profile_availabilities=p.availabilities,
                profile_includes=p.includes,
            ),
        )
        for p in profiles
    ]
    agents = [a for a in Agent.objects.filter(system=tool.system) if tool.category and tool.category in a.categories]
    changes = list(tool.changes.select_related("revision").order_by("-revision__number"))
    line = manifest_line_of(tool)
    spellings = [
        (_("declared id"), tool.declared_id),
        (_("canonical key"), tool.canonical_key),
        (_("LLM name"), tool.llm_name),
        *[(_("alias"), alias) for alias in tool.aliases or []],
    ]
    metadata = metadata_v2(descriptor_of(tool), owner_team=tool.owner.slug if tool.owner else None)
    return ToolPage(tool, line, eligibility, agents, changes, spellings, metadata)


# --- teams ---------------------------------------------------------------------------------------


def teams_overview() -> list[dict[str, Any]]:
    """Every team with its live tool count, findings counts and ownership rules: three queries."""
    tools = dict(
        Tool.objects.live()
        .filter(owner__isnull=False)
        .values("owner")
        .annotate(n=Count("pk"))
        .values_list("owner", "n")
    )
    findings = {
        row["tool__owner"]: row
        for row in Finding.objects.filter(tool__owner__isnull=False, tool__retired_in__isnull=True)
        .values("tool__owner")
        .annotate(errors=Count("pk", filter=Q(severity="error")), warnings=Count("pk", filter=Q(severity="warning")))
    }
    rules: dict[int, list[OwnershipRule]] = {}
    for rule in OwnershipRule.objects.order_by("system", "plane", "module"):
        rules.setdefault(rule.team_id, []).append(rule)
    out = []
    for team in Team.objects.order_by("slug"):
        f = findings.get(team.pk, {})
        out.append(
            {
                "team": team,
                "tools": tools.get(team.pk, 0),
                "errors": f.get("errors", 0),
                "warnings": f.get("warnings", 0),
                "rules": rules.get(team.pk, []),
            }
        )
    return out


# --- the dashboard -------------------------------------------------------------------------------


def dashboard() -> dict[str, Any]:
    """Counts for the dashboard: a fixed handful of grouped queries."""
    live = Tool.objects.live()

    def grouped(column: str) -> list[tuple[str, str, int]]:
        rows = live.values("system", column).annotate(n=Count("pk")).order_by("system", column)
        return [(r["system"], r[column] or "—", r["n"]) for r in rows]

    profiles = list(CatalogProfile.objects.order_by("slug"))
    counts = live.aggregate(**{f"p{i}": Count("pk", filter=plan_eligible_q_for(p)) for i, p in enumerate(profiles)})
    eligible = [(p, counts[f"p{i}"]) for i, p in enumerate(profiles)]
    findings = list(
        Finding.objects.filter(Q(tool__isnull=True) | Q(tool__retired_in__isnull=True))
        .values("severity", "rule")
        .annotate(n=Count("pk"))
        .order_by("severity", "-n", "rule")
    )
    pending = list(
        CatalogRevision.objects.exclude(review_state=ReviewState.APPROVED.value).order_by("-created_at")[:10]
    )
    return {
        "by_plane": grouped("plane"),
        "by_availability": grouped("availability"),
        "by_policy": grouped("effective_policy_class"),
        "eligible": eligible,
        "findings": findings,
        "findings_by_severity": {s: sum(r["n"] for r in findings if r["severity"] == s) for s in ("error", "warning")},
        "pending_revisions": pending,
        "embeddings": embedding_status(),
    }


def plan_eligible_q_for(profile: CatalogProfile) -> Q:
    return Q(plane="business") & (
        Q(availability__in=profile.availabilities) | Q(system=profile.system, declared_id__in=profile.includes)
    )
