"""Card bundles for the web frontend: GET /api/v1/cards/{locale}.json (token scope `cards`).

The bundle is taken along the locale's fallback chain (de-AT → de → en), carries an ETag over its bytes
and answers 304 to a matching If-None-Match, so a frontend polling for changes moves no body until one lands.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from ninja import Router
from ninja.errors import HttpError

from catalog.cards.domain.locales import normalize_locale
from catalog.cards.selectors.exports import bundle
from catalog.core.auth import ScopedBearer

router = Router(tags=["cards"], auth=ScopedBearer("cards"))


@router.get(
    "/{locale}.json",
    summary="The card-string bundle of one locale (plural strings are lists in gettext form order)",
    response={200: dict, 304: None, 404: dict},
)
def card_bundle(request: HttpRequest, locale: str) -> HttpResponse:
    try:
        code = normalize_locale(locale)
    except ValueError as exc:
        raise HttpError(404, str(exc)) from exc
    found = bundle(code)
    if found is None:
        raise HttpError(404, f"no card locale {code}")
    # Authenticated first (ninja ran the bearer check), then the conditional answer.
    not_modified = get_conditional_response(request, etag=found.etag)
    if not_modified is not None:
        not_modified["ETag"] = found.etag
        return not_modified
    response = HttpResponse(found.body, content_type="application/json; charset=utf-8")
    response["ETag"] = found.etag
    response["Cache-Control"] = "no-cache"  # revalidate every time: the ETag makes that cheap
    response["Content-Language"] = code
    return response
