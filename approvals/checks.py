"""Boot checks for the approvals settings: a bad value stops `manage.py check`, runserver, gunicorn, the worker and
beat (condor_admin/boot.py runs the same checks), instead of routing requests to the wrong approvers."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from approvals.services.common import parse_aliases


@register("condor")
def domain_aliases_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    _, problems = parse_aliases(settings.APPROVALS_DOMAIN_ALIASES)
    return [
        Error(
            f"APPROVALS_DOMAIN_ALIASES: {problem}",
            hint='A JSON object, e.g. {"prescriptions": "medication", "appointments": "appointment"}.',
            id="approvals.E001",
        )
        for problem in problems
    ]
