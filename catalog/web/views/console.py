"""The everyday console: dashboard, catalog browser and export, tool page, owner lookup, teams, language."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from django.core.paginator import Paginator
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    QueryDict,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse
from django.utils import timezone, translation
from django.utils.html import conditional_escape
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from catalog.core.access import page
from catalog.core.permissions import is_safety_officer
from catalog.domain.rules import RULES
from catalog.models import Team, Tool, UserPreference
from catalog.selectors.catalog import SORTS, CatalogFilters, catalog_facets, catalog_rows, catalog_tools
from catalog.selectors.dashboard import catalog_summary, dashboard
from catalog.selectors.governance import findings_list
from catalog.selectors.owners import owner_lookup
from catalog.selectors.teams import teams_overview
from catalog.selectors.tool import tool_page
from catalog.web.forms import CatalogFilterForm, LanguageForm, OwnerLookupForm, WaiverForm, catalog_filters
from catalog.web.middleware import SESSION_KEY

PAGE_SIZE = 50
EXPORT_COLUMNS = (
    "system",
    "declared_id",
    "canonical_key",
    "llm_name",
    "plane",
    "module",
    "owner",
    "availability",
    "policy_class",
    "effective_policy_class",
    "mutating",
    "is_mutating",
    "hitl_tier",
    "retry_class",
    "effective_retry_class",
    "idempotency",
    "findings",
    "errors",
    "signed_off",
)


@page("home")
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "catalog/dashboard.html", {"summaries": catalog_summary(), **dashboard()})


Pairs = tuple[tuple[str, tuple[str, ...]], ...]


def _pairs(choices: dict[str, list[str]]) -> Pairs:
    return tuple((k, tuple(v)) for k, v in choices.items())


def _submitted(request: HttpRequest) -> Pairs | None:
    """The filter values of the query string, in a fixed order (None: nothing submitted at all)."""
    if not request.GET:
        return None
    names = CatalogFilterForm.base_fields
    return tuple(sorted((k, tuple(v)) for k, v in request.GET.lists() if k in names))


def _bound_form(facets: Pairs, data: Pairs | None) -> CatalogFilterForm:
    query = None
    if data is not None:
        query = QueryDict(mutable=True)
        for name, values in data:
            query.setlist(name, list(values))
    return CatalogFilterForm(query, facets={k: list(v) for k, v in facets}, sorts=list(SORTS))


# The filters are validated and rendered one by one: each field's answer depends on its own submitted values
# (and the choices) only, since the form has no rule across fields (a system check keeps it so), and one
# filter's few values repeat far more often than whole combinations of them do. Building the form, validating
# it and rendering its hundred options was a third of the page's CPU; each (field, values) is now done once per
# process. The choices are part of every key, so a value an import removed is refused at once.
_INVALID = object()


@lru_cache(maxsize=2048)
def _cleaned(facets: Pairs, name: str, values: tuple[str, ...]) -> Any:
    form = _bound_form(facets, ((name, values),))
    return form.cleaned_data[name] if form.is_valid() else _INVALID


def _filters_of(facets: Pairs, data: Pairs | None) -> CatalogFilters:
    """What the submitted filters select. A value that does not validate selects the whole catalog, as a fresh
    page does."""
    if data is None:
        return CatalogFilters()
    cleaned = {}
    for name, values in data:
        value = _cleaned(facets, name, values)
        if value is _INVALID:
            return CatalogFilters()
        cleaned[name] = value
    return CatalogFilters(**catalog_filters(cleaned))


def _catalog_query(request: HttpRequest) -> CatalogFilters:
    return _filters_of(_pairs(catalog_facets()), _submitted(request))


@lru_cache(maxsize=4096)
def _row_links(script_prefix: str, system: str, declared_id: str, owner: str | None) -> tuple[str, str | None]:
    """A row's tool and team links. Reversing them took a third of the table's CPU; they never change for a
    deployment (its script prefix is part of the key), so each is reversed once per process."""
    return reverse("tool", args=[system, declared_id]), reverse("team", args=[owner]) if owner else None


@lru_cache(maxsize=2048)
def _filter_field_html(language: str, facets: Pairs, name: str, data: Pairs | None) -> str:
    """One filter control; `data` is what was submitted for it alone (None: nothing submitted at all)."""
    form = _bound_form(facets, data)
    with translation.override(language):
        return render_to_string("catalog/catalog.html#filter-field", {"field": form[name]})


_FILTER_FIELDS = [name for name in CatalogFilterForm.base_fields if name not in ("q", "sort")]


def _filter_fields_html(language: str, facets: Pairs, data: Pairs | None) -> str:
    """The filter controls as HTML: the search box, the selects, the hidden sort."""

    def html(name: str) -> str:
        own = None if data is None else tuple(pair for pair in data if pair[0] == name)
        return _filter_field_html(language, facets, name, own)

    selects = "".join(html(name) for name in _FILTER_FIELDS)
    return mark_safe(f"{html('q')}\n  {selects}\n  {html('sort')}")  # each part rendered (escaped) by a template


# The table's head and rows are pure functions of what they show, so each rendering is kept per process under
# exactly those values (and the language): a row whose tool, owner, findings or sign-off changed has another key
# and is rendered anew, never served stale. Rendering the 50 rows and 11 sort links in the template engine was
# most of the page's CPU (measured: 63 % of it under the mixed load), and the catalog's rows repeat. The head
# is kept per language and sort order with a stand-in where each link carries the current filters, which are put
# in (escaped, as the template would) per request.
_FILTERS_HERE = "\x00filters\x00"  # passes through the template's escaping unchanged


@lru_cache(maxsize=64)
def _table_head_template(language: str, sort: str) -> str:
    with translation.override(language):
        return render_to_string("catalog/catalog.html#table-head", {"sort": sort, "sort_query": _FILTERS_HERE})


def _table_head_html(language: str, sort: str, sort_query: str) -> str:
    return mark_safe(_table_head_template(language, sort).replace(_FILTERS_HERE, conditional_escape(sort_query)))


@lru_cache(maxsize=4096)
def _table_row_html(language: str, row: tuple[tuple[str, Any], ...]) -> str:
    with translation.override(language):
        return render_to_string("catalog/catalog.html#table-row", {"t": dict(row)})


@page("catalog")
def catalog_page(request: HttpRequest) -> HttpResponse:
    choices, submitted = _pairs(catalog_facets()), _submitted(request)
    filters = _filters_of(choices, submitted)
    paginator = Paginator(catalog_rows(filters), PAGE_SIZE)
    tools = paginator.get_page(request.GET.get("page"))
    prefix = get_script_prefix()
    language = translation.get_language()
    rows = []
    for row in tools:
        row["url"], row["owner_url"] = _row_links(prefix, row["system"], row["declared_id"], row["owner__slug"])
        rows.append(_table_row_html(language, tuple(row.items())))
    query = request.GET.copy()
    query.pop("page", None)
    sort_query = query.copy()
    sort_query.pop("sort", None)
    context = {
        "tools": tools,
        "table_head": _table_head_html(language, filters.sort, sort_query.urlencode()),
        "table_rows": mark_safe("".join(rows)),  # each row was rendered (escaped) by the template engine
        "filters": filters,
        "query": query.urlencode(),
        "sort": filters.sort,
    }
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, "catalog/catalog.html#table", context)
    filter_fields = _filter_fields_html(language, choices, submitted)
    return render(request, "catalog/catalog.html", {**context, "filter_fields": filter_fields})


def _export_row(tool: Tool) -> dict[str, Any]:
    return {
        "system": tool.system,
        "declared_id": tool.declared_id,
        "canonical_key": tool.canonical_key,
        "llm_name": tool.llm_name,
        "plane": tool.plane,
        "module": tool.module,
        "owner": tool.owner.slug if tool.owner else None,
        "availability": tool.availability,
        "policy_class": tool.policy_class,
        "effective_policy_class": tool.effective_policy_class,
        "mutating": tool.mutating,
        "is_mutating": tool.is_mutating,
        "hitl_tier": tool.hitl_tier,
        "retry_class": tool.retry_class,
        "effective_retry_class": tool.effective_retry_class,
        "idempotency": tool.idempotency,
        "findings": tool.findings_count,  # type: ignore[attr-defined]
        "errors": tool.error_count,  # type: ignore[attr-defined]
        "signed_off": bool(tool.safety_revision and tool.safety_revision.review_state == "approved"),
    }


class _Echo:
    def write(self, value: str) -> str:
        return value


@page("catalog-export")
def catalog_export(request: HttpRequest, fmt: str) -> HttpResponseBase:
    """Exactly the filtered set, every page of it, as CSV or JSON."""
    filters = _catalog_query(request)
    rows = (_export_row(t) for t in catalog_tools(filters).iterator(chunk_size=1000))
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response: HttpResponseBase
    if fmt == "json":
        response = HttpResponse(
            json.dumps(list(rows), ensure_ascii=False, indent=1), content_type="application/json; charset=utf-8"
        )
    elif fmt == "csv":
        writer = csv.DictWriter(_Echo(), fieldnames=EXPORT_COLUMNS)

        def stream() -> Iterator[str]:
            yield writer.writeheader()  # DictWriter returns what the file's write returned: the line
            for row in rows:
                yield writer.writerow(row)

        response = StreamingHttpResponse(stream(), content_type="text/csv; charset=utf-8")
    else:
        raise Http404("export format must be csv or json")
    response["Content-Disposition"] = f'attachment; filename="condor-catalog-{stamp}.{fmt}"'
    return response


@page("tool")
def tool_view(request: HttpRequest, system: str, declared_id: str) -> HttpResponse:
    try:
        data = tool_page(system, declared_id)
    except Tool.DoesNotExist as exc:
        raise Http404(f"no tool {declared_id!r} in {system}") from exc
    findings = list(findings_list(tool_id=data.tool.pk))
    waivable = sorted({f.rule for f in findings if RULES[f.rule].waivable and f.waived_until is None})
    officer = is_safety_officer(request.user)
    return render(
        request,
        "catalog/tool.html",
        {
            "page": data,
            "tool": data.tool,
            "findings": findings,
            "waivers": data.tool.waivers.select_related("granted_by", "revoked_by").order_by("-created_at"),
            "now": timezone.now(),
            "may_waive": officer and bool(waivable),
            "may_revoke": officer,
            "form": WaiverForm(rules=waivable),
        },
    )


@page("owners")
def owners_page(request: HttpRequest) -> HttpResponse:
    form = OwnerLookupForm(request.GET or None)
    result = owner_lookup(form.cleaned_data["q"]) if form.is_bound and form.is_valid() else None
    if result and len(result.matches) == 1 and request.GET.get("go") == "tool":
        tool = result.matches[0][0]
        return redirect("tool", system=tool.system, declared_id=tool.declared_id)
    template = "catalog/owners.html#result" if request.htmx else "catalog/owners.html"  # type: ignore[attr-defined]
    return render(request, template, {"form": form, "result": result})


@page("teams")
def teams_page(request: HttpRequest) -> HttpResponse:
    return render(request, "catalog/teams.html", {"teams": teams_overview()})


@page("team")
def team_page(request: HttpRequest, slug: str) -> HttpResponse:
    team = get_object_or_404(Team, slug=slug)
    filters = CatalogFilters(owner=slug)
    return render(
        request,
        "catalog/team.html",
        {"team": team, "tools": catalog_tools(filters), "rules": team.ownership_rules.order_by("system", "plane")},
    )


@require_POST
@page("language")
def language_view(request: HttpRequest) -> HttpResponse:
    form = LanguageForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("language: choose one of the console's languages")
    language = form.cleaned_data["language"]
    UserPreference.objects.update_or_create(user=request.user, defaults={"language": language})
    request.session[SESSION_KEY] = language
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return redirect(target)
