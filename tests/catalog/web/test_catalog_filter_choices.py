"""The catalog's filter choices follow the live catalog: a module that an import drops is no filter any more."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.catalog.web.test_console_pages import rows

pytestmark = pytest.mark.django_db


def test_the_filter_choices_follow_each_import(oncall: Client, manifests: Any) -> None:
    from catalog.services.imports import catalog_import

    catalog_import(
        raw=manifests.encode(
            manifests.condor([manifests.condor_tool("readA", module="alpha")], forcedFloors=[], baselineCount=1)
        ),
        via="t",
    )
    assert '<option value="alpha">alpha</option>' in oncall.get("/catalog/").content.decode()
    assert rows(oncall, module="alpha") == ["readA"]
    catalog_import(
        raw=manifests.encode(
            manifests.condor([manifests.condor_tool("readB", module="beta")], forcedFloors=[], baselineCount=1)
        ),
        via="t",
    )
    body = oncall.get("/catalog/").content.decode()
    assert '<option value="beta">beta</option>' in body and 'value="alpha"' not in body
    # A module that no longer exists is not a filter any more (it was one a moment ago): the whole catalog shows.
    assert rows(oncall, module="alpha") == ["readB"] and rows(oncall, module="beta") == ["readB"]
