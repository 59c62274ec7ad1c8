"""A mistyped hybrid-ranking setting stops every process at start (a system check), not a silently wrong ranking."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from catalog.checks import ranking_settings_are_valid


def test_the_defaults_pass(settings: Any) -> None:
    assert ranking_settings_are_valid() == []
    settings.CONDOR_RAG_INDEX_WATCH_SECONDS = 0  # off is valid too
    assert ranking_settings_are_valid() == []


@pytest.mark.parametrize(
    ("name", "value", "check_id"),
    [
        ("CONDOR_RAG_FUSION", "rfr", "condor.E030"),
        ("CONDOR_RAG_SHORTLIST", 20, "condor.E031"),
        ("CONDOR_RAG_NEGATIVE_WEIGHT", -1.0, "condor.E032"),
        ("CONDOR_RAG_INDEX_WATCH_SECONDS", -1.0, "condor.E033"),
        ("CONDOR_RAG_INDEX_WATCH_SECONDS", 0.001, "condor.E033"),  # a thousand freshness reads a second
    ],
)
def test_a_bad_setting_is_named_and_stops_manage_py_check(
    settings: Any, name: str, value: object, check_id: str
) -> None:
    setattr(settings, name, value)
    [error] = ranking_settings_are_valid()
    assert error.id == check_id and name in error.msg
    with pytest.raises(SystemCheckError, match=check_id):
        call_command("check")
