"""Request-body cap: an oversized body is refused with a 413 that says the limit, before anything reads it."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse


class RequestBodyLimitMiddleware:
    """Every request body above CONDOR_MAX_REQUEST_BYTES is a 413: JSON under the API, plain text elsewhere.

    The manifest import is the one endpoint with its own, larger cap (CONDOR_MAX_MANIFEST_BYTES); it answers
    its own 413. Django's DATA_UPLOAD_MAX_MEMORY_SIZE sits above that cap for the import's sake, so without this
    every other endpoint would buffer and parse up to 33 MB. Under WSGI a body without Content-Length is read
    as empty, so the declared length is the whole story.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._manifest_path: str | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0
        limit = settings.CONDOR_MAX_REQUEST_BYTES
        if size > limit and not self._is_manifest_import(request):
            detail = f"request body is {size} bytes; the limit is {limit} bytes (CONDOR_MAX_REQUEST_BYTES)"
            if request.path_info.startswith("/api/"):
                return JsonResponse({"detail": detail}, status=413)
            return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def _is_manifest_import(self, request: HttpRequest) -> bool:
        if self._manifest_path is None:
            self._manifest_path = reverse("api:import_revision")
        return request.method == "POST" and request.path_info == self._manifest_path
