"""Sign-in throttling for the console's and the admin's sign-in forms.

After CONDOR_SIGNIN_MAX_FAILURES failed passwords for one username from one address within
CONDOR_SIGNIN_FAILURE_WINDOW_SECONDS, that pair is locked out for CONDOR_SIGNIN_LOCKOUT_SECONDS: the form says
so, and refuses even the right password until then. Counting per username *and* address means a stranger
guessing at someone's account does not lock its owner out from their own desk.

The counters live in Django's cache (Redis in production, so every server process sees the same count). It is
a check in the two forms rather than django-axes: two forms are the only places passwords are checked (the API
takes bearer tokens), and this needs no tables, no admin and no middleware of its own.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.utils.translation import ngettext

from catalog.core.audit import Actor, audit_record

logger = logging.getLogger("condor.security")


def now() -> float:
    """The clock the lockout is measured against (tests move it)."""
    return time.time()


def client_address(request: HttpRequest | None) -> str:
    """The client's address: REMOTE_ADDR, or behind a proxy the right-most entry of CONDOR_CLIENT_IP_HEADER
    (the entry the proxy itself appended; the ones before it are whatever the client chose to send)."""
    if request is None:
        return "unknown"
    header = settings.CONDOR_CLIENT_IP_HEADER
    if header:
        forwarded = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        last = forwarded.split(",")[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR") or "unknown"


def _keys(username: str, address: str) -> tuple[str, str]:
    # Hashed: a username is attacker-chosen text, and cache keys have length and character limits.
    digest = hashlib.sha256(f"{username.casefold()}\n{address}".encode()).hexdigest()[:32]
    return f"signin:failures:{digest}", f"signin:locked:{digest}"


def signin_lockout_remaining(*, username: str, address: str) -> int:
    """Seconds until `username` may try again from `address`; 0 when it may now."""
    until = cache.get(_keys(username, address)[1])
    return max(0, math.ceil(until - now())) if until else 0


def signin_failure_record(*, username: str, address: str) -> int:
    """Count one failed password. The failure that reaches the limit locks the pair out, and is logged and
    audited; returns the lockout's seconds then, else 0."""
    failures_key, locked_key = _keys(username, address)
    window = settings.CONDOR_SIGNIN_FAILURE_WINDOW_SECONDS
    cache.add(failures_key, 0, timeout=window)  # the window opens at the first failure
    try:
        failures = cache.incr(failures_key)  # atomic in Redis: parallel guesses are all counted
    except ValueError:  # the window closed between add and incr
        cache.set(failures_key, 1, timeout=window)
        failures = 1
    if failures < settings.CONDOR_SIGNIN_MAX_FAILURES:
        return 0
    lockout = settings.CONDOR_SIGNIN_LOCKOUT_SECONDS
    cache.set(locked_key, now() + lockout, timeout=lockout)
    cache.delete(failures_key)
    logger.warning(
        "sign-in locked for %ss: %s failed passwords for username %r from %s", lockout, failures, username, address
    )
    with transaction.atomic():
        audit_record(
            actor=Actor(label="system:signin-throttle"),
            action="signin.locked",
            object_type="username",
            object_id=username[:200],
            after={"address": address, "failures": failures, "lockoutSeconds": lockout},
        )
    return lockout


def locked_error(seconds: int) -> ValidationError:
    minutes = max(1, math.ceil(seconds / 60))
    message = ngettext(
        "Too many failed sign-in attempts for this username from your address. "
        "Sign-in is locked; try again in %(minutes)s minute.",
        "Too many failed sign-in attempts for this username from your address. "
        "Sign-in is locked; try again in %(minutes)s minutes.",
        minutes,
    )
    return ValidationError(message, code="locked", params={"minutes": minutes})


class SignInForm(AuthenticationForm):
    """The console's sign-in form, throttled."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request)
        # Checked before the password: during a lockout no password is even looked at.
        if username and (remaining := signin_lockout_remaining(username=username, address=address)):
            raise locked_error(remaining)
        try:
            return super().clean()
        except ValidationError as exc:
            if username and exc.code == "invalid_login":
                lockout = signin_failure_record(username=username, address=address)
                if lockout:
                    raise locked_error(lockout) from exc
            raise


class AdminSignInForm(SignInForm, AdminAuthenticationForm):
    """The admin's sign-in form (staff only), throttled by the same counters."""
