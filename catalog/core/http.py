"""The console's request type: an HttpRequest as django-htmx's middleware leaves it (django-htmx, "Type checking").

Every console page runs behind ConsoleHtmxMiddleware (condor_admin.middleware), which sets `request.htmx`; a view
that reads it takes this type instead of HttpRequest, so mypy knows the attribute. Here in core rather than in
catalog.web, because approvals' pages read it too and may import only catalog's platform (tests/test_architecture.py).
"""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
