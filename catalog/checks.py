"""The boot gate: under a clinical profile, a non-production tool being active is a boot failure.

Registered as a system check, so `manage.py check`, `runserver` and `migrate` refuse to start, and so do
gunicorn, the Celery worker and Celery beat, which run the same checks before they serve (condor_admin/boot.py).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import DatabaseError

from catalog.domain.profiles import non_production_active
from catalog.domain.vocabulary import Availability
from catalog.models import CatalogProfile, Tool
from catalog.rag.domain.hybrid import NORM, RRF


@register("condor")
def active_profile_gate(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    profile_id = getattr(settings, "CONDOR_ACTIVE_PROFILE", "")
    if not profile_id:
        return []
    try:
        profile = CatalogProfile.objects.filter(slug=profile_id).first()
        if profile is None:
            # A fresh database must still migrate and import; the gate applies once the profile exists.
            return [
                Warning(
                    f"CONDOR_ACTIVE_PROFILE={profile_id!r} is not declared by any imported manifest",
                    hint="Import the catalog manifest that declares this profile, or fix the setting.",
                    id="condor.W001",
                )
            ]
        if not profile.clinical:
            return []
        # Only the rows that can offend: a boot reads a handful of non-production tools, not the whole catalog.
        live = (
            Tool.objects.live()
            .exclude(availability=Availability.PRODUCTION)
            .values_list("declared_id", "availability", "system")
        )
        by_system: dict[str, list[tuple[str, str]]] = {}
        for declared_id, availability, system in live:
            by_system.setdefault(system, []).append((declared_id, availability))
        offending = [
            f"{system}:{tool_id}"
            for system, tools in sorted(by_system.items())
            for tool_id in non_production_active(
                tools, profile_availabilities=profile.availabilities, profile_includes=profile.includes
            )
        ]
    except DatabaseError as exc:  # no tables yet (before migrate) or the database is down
        return [Warning(f"could not check the active catalog profile: {exc}", id="condor.W002")]
    if not offending:
        return []
    return [
        Error(
            f"clinical profile {profile_id!r} has {len(offending)} non-production tool(s) active: "
            + ", ".join(offending[:20]),
            hint="A non-production tool must not exist under a clinical profile: remove it from the profile's "
            "availabilities/includes, or run under a non-clinical profile.",
            obj=profile_id,
            id="condor.E001",
        )
    ]


@register(Tags.security, deploy=True)
def signin_throttle_is_shared(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """`check --deploy`: sign-in lockouts need one cache for every server process (catalog/core/signin.py)."""
    if settings.CACHES["default"]["BACKEND"].endswith(".LocMemCache"):
        return [
            Warning(
                "sign-in failures are counted in a per-process memory cache: each gunicorn worker allows its own "
                "CONDOR_SIGNIN_MAX_FAILURES guesses, and a restart forgets every lockout",
                hint="Set REDIS_URL (or CACHE_URL) so all processes share one count.",
                id="condor.W010",
            )
        ]
    return []


# Shorter than this, a key could be guessed offline from the chain it signs (it is compared as bytes).
MIN_AUDIT_KEY_LENGTH = 32


@register(Tags.security, deploy=True)
def audit_key_is_set(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """`check --deploy`: the audit chain's key must come from the environment, not from SECRET_KEY's stand-in
    (catalog/models/audit.py): otherwise the chain is keyed by a secret that rotates for other reasons."""
    key = getattr(settings, "CONDOR_AUDIT_KEY", "")
    if not key:
        problem = "CONDOR_AUDIT_KEY is not set: the audit chain is keyed with a stand-in derived from SECRET_KEY"
    elif len(key) < MIN_AUDIT_KEY_LENGTH:
        problem = f"CONDOR_AUDIT_KEY is shorter than {MIN_AUDIT_KEY_LENGTH} characters"
    else:
        return []
    return [
        Error(
            problem,
            hint='Set CONDOR_AUDIT_KEY to a random secret kept outside the database (python -c "import secrets; '
            'print(secrets.token_urlsafe(48))"), before the first audit event, and never change it: events sealed '
            "under another key verify as edited.",
            id="condor.E020",
        )
    ]


@register("condor")
def ranking_settings_are_valid(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A mistyped fusion or a shortlist shorter than the largest top-k would rank silently wrong: refuse to start."""
    errors: list[CheckMessage] = []
    if settings.CONDOR_RAG_FUSION not in (NORM, RRF):
        errors.append(
            Error(
                f"CONDOR_RAG_FUSION={settings.CONDOR_RAG_FUSION!r} is not a fusion",
                hint=f"Choose {NORM} (per-query z-scores, the default) or {RRF} (reciprocal rank).",
                id="condor.E030",
            )
        )
    if settings.CONDOR_RAG_SHORTLIST < settings.CONDOR_RAG_MAX_TOP_K:
        errors.append(
            Error(
                f"CONDOR_RAG_SHORTLIST={settings.CONDOR_RAG_SHORTLIST} is shorter than the largest top-k "
                f"({settings.CONDOR_RAG_MAX_TOP_K}): a resolution could not fill its top k",
                hint=f"Set it to {settings.CONDOR_RAG_MAX_TOP_K} or more (default 200).",
                id="condor.E031",
            )
        )
    if not 0 <= settings.CONDOR_RAG_NEGATIVE_WEIGHT <= 10:
        errors.append(
            Error(
                f"CONDOR_RAG_NEGATIVE_WEIGHT={settings.CONDOR_RAG_NEGATIVE_WEIGHT} is outside 0..10",
                hint="0 ignores the DO NOT USE WHEN sentences; 1 (the default) lowers a tool by the whole margin.",
                id="condor.E032",
            )
        )
    watch = settings.CONDOR_RAG_INDEX_WATCH_SECONDS
    if watch != 0 and not 0.1 <= watch <= 3600:
        errors.append(
            Error(
                f"CONDOR_RAG_INDEX_WATCH_SECONDS={watch} is neither 0 (off) nor within 0.1..3600 seconds",
                hint="1 (the default) keeps each process's retrieval index current within a second of a change.",
                id="condor.E033",
            )
        )
    return errors


@register("condor")
def mcp_headers_are_valid(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """CONDOR_MCP_HEADERS must be `{server id: {header: value}}`, all strings: a mistyped one would send a
    re-import without its credentials, or fail it with a message far from the cause."""
    value = getattr(settings, "CONDOR_MCP_HEADERS", {})
    problem = mcp_headers_problem(value)
    if problem is None:
        return []
    return [
        Error(
            f"CONDOR_MCP_HEADERS: {problem}",
            hint='Set it to a JSON object of objects of strings, e.g. {"crm": {"Authorization": "Bearer …"}}.',
            id="condor.E040",
        )
    ]


def mcp_headers_problem(value: Any) -> str | None:
    if isinstance(value, str):
        return "not valid JSON"
    if not isinstance(value, dict):
        return f"a JSON object is needed, got {type(value).__name__}"
    for server_id, headers in value.items():
        if not isinstance(headers, dict):
            return f"{server_id!r}: an object of header names and values is needed, got {type(headers).__name__}"
        for name, header_value in headers.items():
            if not name:
                return f"{server_id!r}: a header name must not be empty"
            if not isinstance(header_value, str):
                return f"{server_id!r}.{name!r}: a header value must be a string, got {type(header_value).__name__}"
    return None


# Each telemetry setting and its least value (settings.py, "Runtime telemetry").
USAGE_MINIMA = {
    "CONDOR_OTLP_MAX_BYTES": 1024,
    "CONDOR_OTLP_MAX_INFLATED_BYTES": 1024,
    "CONDOR_OTLP_MAX_SPANS": 1,
    "CONDOR_OTLP_MAX_CONCURRENT": 1,
    "CONDOR_USAGE_MINUTE_HOURS": 1,
    "CONDOR_USAGE_RETENTION_DAYS": 1,
    "CONDOR_USAGE_SAMPLES_PER_TOOL": 1,
    "CONDOR_USAGE_CALL_WINDOW_HOURS": 1,
    "CONDOR_USAGE_CANDIDATE_SET_HOURS": 1,
    "CONDOR_USAGE_FINDING_DAYS": 1,
    "CONDOR_USAGE_MAX_UNKNOWN_NAMES": 1,
    # 0 turns the comparison off on purpose; a negative one would do the same unnoticed.
    "APPROVALS_DUPLICATE_WINDOW_MINUTES": 0,
}


@register("condor")
def usage_settings_are_valid(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A zero window would drop the evidence the runtime findings stand on (a retried write goes unseen when the
    call window is empty); minutes kept longer than the retention would never be compacted. Refuse to start."""
    errors: list[CheckMessage] = [
        Error(
            f"{name}={getattr(settings, name)!r} is below {least}",
            hint="Runtime telemetry settings are positive (the duplicate window may be 0); see README.",
            id="condor.E050",
        )
        for name, least in USAGE_MINIMA.items()
        if not isinstance(getattr(settings, name), int) or getattr(settings, name) < least
    ]
    if not errors and settings.CONDOR_USAGE_MINUTE_HOURS >= settings.CONDOR_USAGE_RETENTION_DAYS * 24:
        errors.append(
            Error(
                f"CONDOR_USAGE_MINUTE_HOURS={settings.CONDOR_USAGE_MINUTE_HOURS} is not shorter than the retention "
                f"(CONDOR_USAGE_RETENTION_DAYS={settings.CONDOR_USAGE_RETENTION_DAYS} days)",
                hint="Minute rollups are folded into hours before the retention ends; keep them for hours, not days.",
                id="condor.E051",
            )
        )
    return errors
