from __future__ import annotations

from collections.abc import Iterator

import pytest

from catalog.selectors import owners
from catalog.usage import catalog_index


@pytest.fixture(autouse=True)
def _fresh_usage_index() -> Iterator[None]:
    """Tests roll the database back and may meet an old catalog version again: every test builds its own indexes
    (the ingest's name index and the owner lookup's, which finds the closest tool)."""
    catalog_index.forget()
    owners._INDEX.forget()
    yield
    catalog_index.forget()
    owners._INDEX.forget()
