"""Sign-in throttling for the console's and the admin's sign-in forms.

After CONDOR_SIGNIN_MAX_FAILURES failed passwords for one username from one address within
CONDOR_SIGNIN_FAILURE_WINDOW_SECONDS, that pair is locked out for CONDOR_SIGNIN_LOCKOUT_SECONDS: the form says
so, and refuses even the right password until then. Counting per username *and* address means a stranger
guessing at someone's account does not lock its owner out from their own desk.

The counters live in Django's cache (Redis in production, so every server process sees the same count). It is
a check in the two forms rather than django-axes: two forms are the only places passwords are checked (the API
takes bearer tokens), and this needs no tables, no admin and no middleware of its own.

With the cache down, sign-in keeps working and the throttle keeps counting, in this process's memory: a clinician
must be able to sign in to decide an approval while Redis is away, so failing closed (nobody signs in for the
outage) is out, and failing open (no count at all) would hand a guesser the outage. Counted per process, a
guesser gets at most CONDOR_SIGNIN_MAX_FAILURES tries per web process per window instead of that many in all,
and does not see lockouts Redis holds while it is away; a lockout taken in memory holds until it ends, also
after Redis is back. (A count in the database would be shared, but needs a table of its own.)

A lockout of a username nobody has is logged but not audited: the answer is the same as for a real account (so
the lockout says nothing about which usernames exist), but a guesser cycling through made-up names must not be
able to write the audit log at will.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.utils.translation import ngettext

from catalog.core.audit import Actor, AuditAction, audit_record

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


# The counters while the shared cache is away. Room for many pairs, so that a guesser spraying made-up usernames
# has to fail thousands of times to push its own count out (LocMemCache drops a third of its entries when full).
_local = LocMemCache("condor-signin-fallback", {"OPTIONS": {"MAX_ENTRIES": 20000}})
T = TypeVar("T")


def local_counters() -> BaseCache:
    """This process's own counters, used while the shared cache is away (tests empty it)."""
    return _local


def _counted(operation: Callable[[BaseCache], T]) -> T:
    """`operation` on the shared cache; on this process's counters when the shared cache fails."""
    try:
        return operation(cache)
    except Exception as exc:  # any: cache backends share no error base class (redis.ConnectionError, …)
        logger.warning("sign-in throttle: the cache is unavailable (%s); counting in this process", exc)
        return operation(_local)


def _remaining(store: BaseCache, locked_key: str) -> int:
    until = store.get(locked_key)
    return max(0, math.ceil(until - now())) if until else 0


def signin_lockout_remaining(*, username: str, address: str) -> int:
    """Seconds until `username` may try again from `address`; 0 when it may now."""
    locked_key = _keys(username, address)[1]
    # The local counters too: a lockout taken while the cache was away holds after it is back.
    return max(_counted(lambda store: _remaining(store, locked_key)), _remaining(_local, locked_key))


def _count_failure(store: BaseCache, failures_key: str, locked_key: str) -> int:
    """Count one failure in `store`; returns the failures so far, or 0 when this one did not reach the limit."""
    window = settings.CONDOR_SIGNIN_FAILURE_WINDOW_SECONDS
    store.add(failures_key, 0, timeout=window)  # the window opens at the first failure
    try:
        failures = store.incr(failures_key)  # atomic in Redis: parallel guesses are all counted
    except ValueError:  # the window closed between add and incr
        store.set(failures_key, 1, timeout=window)
        failures = 1
    if failures < settings.CONDOR_SIGNIN_MAX_FAILURES:
        return 0
    lockout = settings.CONDOR_SIGNIN_LOCKOUT_SECONDS
    store.set(locked_key, now() + lockout, timeout=lockout)
    store.delete(failures_key)
    return int(failures)


def signin_failure_record(*, username: str, address: str) -> int:
    """Count one failed password. The failure that reaches the limit locks the pair out, and is logged (and
    audited when the username is someone's); returns the lockout's seconds then, else 0."""
    failures_key, locked_key = _keys(username, address)
    failures = _counted(lambda store: _count_failure(store, failures_key, locked_key))
    if not failures:
        return 0
    lockout = settings.CONDOR_SIGNIN_LOCKOUT_SECONDS
    # Case-insensitive, as the counters are: every spelling of a real account's name is audited.
    users = get_user_model()._default_manager
    known = users.filter(**{f"{get_user_model().USERNAME_FIELD}__iexact": username}).exists()
    logger.warning(
        "sign-in locked for %ss: %s failed passwords for %susername %r from %s",
        *(lockout, failures, "" if known else "unknown ", username, address),
    )
    if known:
        with transaction.atomic():
            audit_record(
                actor=Actor(label="system:signin-throttle"),
                action=AuditAction.SIGNIN_LOCKED,
                object_type="username",
                object_id=username[:200],
                after={"address": address, "failures": failures, "lockoutSeconds": lockout},
            )
    return int(lockout)


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
