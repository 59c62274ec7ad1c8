"""The console pages' tests: a signed-in on-call engineer, the person most of these pages are for."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import signed_in


@pytest.fixture
def oncall(make_user: Any) -> Any:
    return signed_in(make_user, "oscar", "on-call")
