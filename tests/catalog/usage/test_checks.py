from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError


def test_a_zero_call_window_stops_every_process(settings: Any) -> None:
    settings.CONDOR_USAGE_CALL_WINDOW_HOURS = 0
    with pytest.raises(SystemCheckError, match=r"condor.E050.*CONDOR_USAGE_CALL_WINDOW_HOURS=0 is below 1"):
        call_command("check")


def test_a_negative_duplicate_window_stops_every_process(settings: Any) -> None:
    settings.APPROVALS_DUPLICATE_WINDOW_MINUTES = -5
    with pytest.raises(SystemCheckError, match=r"APPROVALS_DUPLICATE_WINDOW_MINUTES=-5 is below 0"):
        call_command("check")
    settings.APPROVALS_DUPLICATE_WINDOW_MINUTES = 0  # off, deliberately
    call_command("check")


def test_minutes_kept_past_the_retention_stop_every_process(settings: Any) -> None:
    settings.CONDOR_USAGE_MINUTE_HOURS, settings.CONDOR_USAGE_RETENTION_DAYS = 48, 2
    with pytest.raises(SystemCheckError, match="condor.E051"):
        call_command("check")
    settings.CONDOR_USAGE_RETENTION_DAYS = 3
    call_command("check")
