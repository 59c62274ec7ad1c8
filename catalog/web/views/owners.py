"""Who owns this tool? Any spelling of its id, a near miss answered with what was meant."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import redirect, render

from catalog.core.access import page
from catalog.core.http import HtmxHttpRequest
from catalog.selectors.owners import owner_lookup
from catalog.web.forms import OwnerLookupForm


@page("owners")
def owners_page(request: HtmxHttpRequest) -> HttpResponse:
    form = OwnerLookupForm(request.GET or None)
    result = owner_lookup(form.cleaned_data["q"]) if form.is_bound and form.is_valid() else None
    if result and len(result.matches) == 1 and request.GET.get("go") == "tool":
        tool = result.matches[0][0]
        return redirect("tool", system=tool.system, declared_id=tool.declared_id)
    template = "catalog/owners.html#result" if request.htmx else "catalog/owners.html"
    return render(request, template, {"form": form, "result": result})
