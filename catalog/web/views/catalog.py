"""The catalog browser and its export: the live tools, filtered, sorted, a page at a time or all of them."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils import timezone

from catalog.core.access import page
from catalog.core.http import HtmxHttpRequest
from catalog.domain.output_safety import csv_cell
from catalog.models import Tool
from catalog.selectors.catalog import SORTS, CatalogRows, catalog_facets, catalog_kept, catalog_tools
from catalog.usage.selectors.health import telemetry
from catalog.web.forms import CatalogFilterForm

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


def _filter_form(request: HttpRequest, facets: dict[str, list[str]] | None = None) -> CatalogFilterForm:
    """The filters of the query string (the URL carries them, so a link shares the view)."""
    return CatalogFilterForm(request.GET or None, facets=facets or catalog_facets(), sorts=list(SORTS))


@page("catalog")
def catalog_page(request: HtmxHttpRequest) -> HttpResponse:
    kept = catalog_kept()
    form = _filter_form(request, kept.facets)
    filters = form.filters()
    tools = Paginator(CatalogRows(filters, kept), PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)  # the pager adds its own
    sort_query = query.copy()
    sort_query.pop("sort", None)  # each column head adds its own
    context = {
        "form": form,
        "tools": tools,
        "sort": filters.sort,
        "query": query.urlencode(),
        "sort_query": sort_query.urlencode(),
        # "No call" means nothing before any runtime has sent telemetry: said beside the count (one more query,
        # only when the filter is set).
        "calls_unheard": bool(filters.calls) and not telemetry().active,
    }
    # htmx asks on every filter change and pager click, and swaps only the table.
    template = "catalog/catalog.html#table" if request.htmx else "catalog/catalog.html"
    return render(request, template, context)


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
        "findings": tool.findings_count,
        "errors": tool.error_count,
        "signed_off": bool(tool.safety_revision and tool.safety_revision.review_state == "approved"),
    }


class _Echo:
    """A file whose write returns what it was given, so csv.writer hands back each line to stream."""

    def write(self, value: str) -> str:
        return value


@page("catalog-export")
def catalog_export(request: HttpRequest, fmt: str) -> HttpResponseBase:
    """Exactly the filtered set, every page of it, as CSV or JSON."""
    filters = _filter_form(request).filters()
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
                # Every cell: a module or owner a manifest declared as `=HYPERLINK(…)` must stay text.
                yield writer.writerow({column: csv_cell(value) for column, value in row.items()})

        response = StreamingHttpResponse(stream(), content_type="text/csv; charset=utf-8")
    else:
        raise Http404("export format must be csv or json")
    response["Content-Disposition"] = f'attachment; filename="condor-catalog-{stamp}.{fmt}"'
    return response
