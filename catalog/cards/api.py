"""Card bundles for the web frontend: GET /api/v1/cards/{locale}.json (token scope `cards`).

The bundle is taken along the locale's fallback chain (de-AT → de → en), carries an ETag over its bytes
and answers 304 to a matching If-None-Match, so a frontend polling for changes moves no body until one lands.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from ninja import Path, Router
from ninja.errors import HttpError
from pydantic import BaseModel

from catalog.cards.domain.locales import normalize_locale
from catalog.cards.selectors.exports import bundle
from catalog.core.api_errors import ErrorOut
from catalog.core.auth import ScopedBearer

router = Router(tags=["cards"], auth=ScopedBearer("cards"))

# RFC 5646 asks every implementation to take language tags of up to 35 characters; the site uses far shorter ones.
LOCALE_MAX_CHARS = 35


# The bundle is served as stored bytes (catalog.cards.domain.bundles.bundle_document); these only describe it.
class PluralOut(BaseModel):
    forms: int
    expr: str


class BundleOut(BaseModel):
    format: str
    locale: str
    fallbacks: list[str]
    plural: PluralOut
    strings: dict[str, str | list[str]]


_ETAG = {
    "ETag": {
        "required": True,
        "description": "send it as If-None-Match to get a 304 until a change lands",
        "schema": {"type": "string"},
    }
}
BUNDLE_HEADERS = {
    "responses": {
        200: {"headers": {**_ETAG, "Content-Language": {"required": True, "schema": {"type": "string"}}}},
        304: {"headers": _ETAG},
    }
}


@router.get(
    "/{locale}.json",
    summary="The card-string bundle of one locale (plural strings are lists in gettext form order)",
    response={200: BundleOut, 304: None, 404: ErrorOut},
    description="404 for a locale that is not a language code, unknown to CLDR, or without card strings.",
    openapi_extra=BUNDLE_HEADERS,
)
def card_bundle(request: HttpRequest, locale: str = Path(..., max_length=LOCALE_MAX_CHARS)) -> HttpResponse:
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
