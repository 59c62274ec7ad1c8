"""The translator's workspace: the keys × locales matrix with its side panel, saving and reviewing without a
reload (htmx partials; every page also works without JavaScript), FHIR status coverage, and exports."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from catalog.cards.display import SLOT_LABELS, shown, state_label
from catalog.cards.domain.locales import SOURCE_LOCALE, babel_locale
from catalog.cards.forms import MatrixFilterForm, ReviewForm, TranslationForm
from catalog.cards.selectors import exports
from catalog.cards.selectors.locales import completion, coverage_table, locales
from catalog.cards.selectors.matrix import Row, matrix_rows, matrix_strings
from catalog.cards.selectors.panel import Panel, panel
from catalog.cards.selectors.specs import slot_max_chars
from catalog.cards.services.translations import (
    CardsRefused,
    may_review,
    may_translate,
    translation_review,
    translation_save,
)
from catalog.core.access import page
from catalog.core.http import HtmxHttpRequest

PAGE_SIZE = 40
# Matrix query parameters that are filters (kept across pages and edits). The side panel is chosen by `key`
# and `lang`: `locale` is the filters' locale, and a panel may show another one without changing the filters.
FILTER_PARAMS = ("q", "locale", "module", "state", "check", "value_set")


def _default_locale(locs: list[Any]) -> str:
    codes = [loc.code for loc in locs if loc.code != SOURCE_LOCALE]
    return "de" if "de" in codes else (codes[0] if codes else SOURCE_LOCALE)


def _filter_query(params: QueryDict, *, page: bool = False) -> str:
    keep = [(k, v) for k in FILTER_PARAMS + (("page",) if page else ()) for v in params.getlist(k) if v]
    return urlencode(keep)


def _decorate_rows(rows: list[Row], selected: tuple[str, str] | None) -> list[Row]:
    for row in rows:
        row.key_shown = shown(row.key_findings)  # type: ignore[attr-defined]
        row.source_shown = shown(row.source_findings)  # type: ignore[attr-defined]
        for cell in row.cells:
            cell.shown = shown(cell.findings)  # type: ignore[attr-defined]
            cell.state_label = state_label(cell.state)  # type: ignore[attr-defined]
            cell.selected = selected == (row.string.key, cell.locale.code)  # type: ignore[attr-defined]
    return rows


def _panel_context(request: HttpRequest, data: Panel | None) -> dict[str, Any]:
    if data is None:
        return {"p": None}
    t = data.translation
    own = t is not None and t.updated_by_id is not None and t.updated_by_id == request.user.pk
    return {
        "p": data,
        "panel_findings": shown(data.findings),
        "source_shown": shown(data.source_findings),
        "editor_forms": list(zip(data.forms, data.form_labels, strict=True)),
        "state": t.state if t else "untranslated",
        "state_text": state_label(t.state if t else "untranslated"),
        "slot_label": SLOT_LABELS.get(data.string.slot, data.string.slot),
        "limit": data.string.max_chars or slot_max_chars().get(data.string.slot),
        "may_edit": may_translate(request.user) and data.locale.code != SOURCE_LOCALE and not data.refused,
        "may_review": may_review(request.user) and t is not None and t.state == "translated" and not own,
        # Four eyes: a reviewer's own translation is not offered for review; the panel says why instead.
        "own_translation": may_review(request.user) and t is not None and t.state == "translated" and own,
        "others": [(c, state_label(c.state)) for c in data.others],
        "lang": babel_locale(data.locale.code).replace("_", "-"),
    }


def _matrix_context(request: HttpRequest, params: QueryDict) -> dict[str, Any]:
    locs = locales()
    default = _default_locale(locs)
    form = MatrixFilterForm(params or None, locales=locs)
    filters = form.filters(default)
    focus = next((loc for loc in locs if loc.code == filters.locale), None)
    paginator = Paginator(matrix_strings(filters, focus), PAGE_SIZE)
    page_obj = paginator.get_page(params.get("page"))
    key, locale = params.get("key", ""), params.get("lang", "") or default
    selected = (key, locale) if key else None
    return {
        "form": form,
        "filters": filters,
        "locs": locs,
        "columns": [loc for loc in locs if loc.code != SOURCE_LOCALE],
        "page": page_obj,
        "rows": _decorate_rows(matrix_rows(list(page_obj.object_list), locs), selected),
        "completion": completion(locs),
        "query": _filter_query(params),
        "page_query": _filter_query(params, page=True),
        "selected": selected,
    }


def _render_matrix(request: HttpRequest, params: QueryDict, **extra: Any) -> HttpResponse:
    context = _matrix_context(request, params)
    key = params.get("key", "")
    if key:
        locale = params.get("lang") or _default_locale(context["locs"])
        draft = params.getlist("form") if extra.get("draft") else None
        data = panel(
            key,
            locale,
            context["locs"],
            draft=draft,
            draft_same=params.get("same_as_source") in ("1", "on", "true"),
            draft_comment=params.get("comment") if draft is not None else None,
        )
        context.update(_panel_context(request, data))
    else:
        context["p"] = None
    context.update(extra)
    return render(request, "cards/matrix.html", context, status=extra.get("status", 200))


@page("cards:matrix")
def matrix_view(request: HtmxHttpRequest) -> HttpResponse:
    if request.htmx:
        return render(request, "cards/matrix.html#table", _matrix_context(request, request.GET))
    return _render_matrix(request, request.GET)


@page("cards:panel")
def panel_view(request: HtmxHttpRequest) -> HttpResponse:
    """The side panel of one string in one locale; with `form` values, the checks and preview of a draft."""
    if not request.htmx:
        return _render_matrix(request, request.GET, draft="form" in request.GET)
    locs = locales()
    key = request.GET.get("key", "")
    locale = request.GET.get("lang") or _default_locale(locs)
    draft = request.GET.getlist("form") if "form" in request.GET else None
    data = panel(
        key,
        locale,
        locs,
        draft=draft,
        draft_same=request.GET.get("same_as_source") in ("1", "on", "true"),
        draft_comment=request.GET.get("comment") if draft is not None else None,
    )
    context = {**_panel_context(request, data), "query": _filter_query(request.GET)}
    part = "checks" if request.GET.get("part") == "checks" and data is not None else "panel"
    return render(request, f"cards/matrix.html#{part}", context)


def _back(query: str, key: str, locale: str) -> str:
    return reverse("cards:matrix") + "?" + "&".join(p for p in (query, urlencode({"key": key, "lang": locale})) if p)


def _after_write(request: HtmxHttpRequest, form_data: dict[str, Any], *, note: str, error: str | None) -> HttpResponse:
    """htmx: the panel, the changed matrix row and the completion bars, swapped in place. Otherwise: back to
    the matrix with the panel open and a message."""
    # `back` came from the page: keep only the matrix's own filters from it.
    key, locale, back = form_data["key"], form_data["lang"], _filter_query(QueryDict(form_data.get("back") or ""))
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, note)
        return redirect(_back(back, key, locale))
    locs = locales()
    data = panel(key, locale, locs)
    context = {**_panel_context(request, data), "query": back, "saved": None if error else note, "error": error}
    if data is not None and not error:
        context["rows"] = _decorate_rows(matrix_rows([data.string], locs), (key, locale))
        context["completion"] = completion(locs)
    return render(request, "cards/_after_write.html", context)


@require_POST
@page("cards:save")
def save_view(request: HtmxHttpRequest) -> HttpResponse:
    form = TranslationForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items()))
    data = form.cleaned_data
    texts = request.POST.getlist("form")
    if data["intent"] == "check":
        # Without JavaScript: the same page, with the checks and preview of what was typed, nothing saved.
        params = request.POST.copy()
        for name in ("csrfmiddlewaretoken", "intent", "back"):
            params.pop(name, None)
        merged = QueryDict(mutable=True)
        merged.update(QueryDict(_filter_query(QueryDict(data["back"]))))
        merged.setlist("form", texts)
        for name in ("key", "lang", "same_as_source", "comment"):
            value = params.get(name)
            if value is not None:
                merged[name] = value
        return _render_matrix(request, merged, draft=True)
    try:
        translation_save(
            user=request.user,
            key=data["key"],
            locale=data["lang"],
            forms=texts,
            same_as_source=data["same_as_source"],
            comment=data["comment"],
        )
    except CardsRefused as exc:
        if exc.forbidden:
            raise PermissionDenied(exc.message) from exc  # a page with the reason; for htmx its text (console.js)
        return _after_write(request, data, note="", error=exc.message)
    return _after_write(request, data, note=_("Saved."), error=None)


@require_POST
@page("cards:review")
def review_view(request: HtmxHttpRequest) -> HttpResponse:
    form = ReviewForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items()))
    data = form.cleaned_data
    try:
        translation_review(user=request.user, key=data["key"], locale=data["lang"])
    except CardsRefused as exc:
        if exc.forbidden:
            raise PermissionDenied(exc.message) from exc  # a page with the reason; for htmx its text (console.js)
        return _after_write(request, data, note="", error=exc.message)
    return _after_write(request, data, note=_("Marked reviewed."), error=None)


@page("cards:coverage")
def coverage_view(request: HttpRequest) -> HttpResponse:
    locs = locales()
    rows = coverage_table(locs)
    codes = {loc.code: [0, 0, 0] for loc in locs}  # raw, English only, total
    for row in rows:
        for cell in row.cells:
            codes[cell.locale][0] += len(cell.missing)
            codes[cell.locale][1] += len(cell.fallback)
            codes[cell.locale][2] += len(row.value_set.codes)
    summary = [(loc, *codes[loc.code]) for loc in locs]
    return render(request, "cards/coverage.html", {"locs": locs, "rows": rows, "summary": summary})


@page("cards:export")
def export_view(request: HttpRequest) -> HttpResponse:
    """Downloads: no locale → the template (cards.pot); ?locale=de → its .po; &format=json → its bundle."""
    locale = request.GET.get("locale", "")
    fmt = request.GET.get("format", "po")
    if not locale:
        body, name, content_type = exports.export_template(), "cards.pot", "text/x-gettext-translation"
    elif fmt == "json":
        found = exports.bundle(locale)
        if found is None:
            raise Http404(f"no locale {locale!r}")
        body, name, content_type = found.body, f"cards-{locale}.json", "application/json"
    elif fmt == "po":
        exported = exports.export_locale(locale)
        if exported is None:
            raise Http404(f"no translated locale {locale!r} (English is the template: cards.pot)")
        body, name, content_type = exported, f"cards-{babel_locale(locale)}.po", "text/x-gettext-translation"
    else:
        raise Http404("format must be po or json")
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
