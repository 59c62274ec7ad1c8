"""The console's session store: Django's cached_db design (the session table, read through the cache), which keeps
working while the cache (Redis) is down.

Django's own cached_db reads the table when the cache misses, but re-filling the cache after that read, the "is this
key taken" check of a new session and the cache delete of a signed-out or cycled session raise when the cache server
is away: with Redis down every page of a signed-in person and every sign-in answered 500. Here every cache call
that fails logs a warning and the store carries on with the table, which is the truth anyway (every write goes to it
first). The cache keys are cached_db's own, so switching between the two keeps the cached sessions.

What a cache that comes back with its old contents (a network split rather than a restart) can still hold: the
copy of a session signed out during the outage, whose row is gone. Its first write fails, as a write to a deleted
session does (Django answers 400, SessionInterrupted), and that also drops the copy; the idle check
(condor_admin.middleware) writes a signed-in session after each minute of use, so such a copy serves at most a
minute. A Redis that restarted empty, the usual outage, holds nothing stale at all.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.backends.cached_db import KEY_PREFIX
from django.contrib.sessions.backends.db import SessionStore as DBStore
from django.core.cache import caches
from django.utils import timezone

logger = logging.getLogger("condor.sessions")


class SessionStore(DBStore):
    """The session table with the cache in front, the cache optional. Every cache call catches any exception: the
    cache backends share no base class for "server away" (redis.ConnectionError, TimeoutError, pymemcache's
    errors), and Django's cached_db catches Exception the same way where it does catch."""

    def __init__(self, session_key: str | None = None) -> None:
        self.cache = caches[settings.SESSION_CACHE_ALIAS]
        super().__init__(session_key)

    def load(self) -> dict[str, Any]:
        key = KEY_PREFIX + (self.session_key or "")
        try:
            data = self.cache.get(key)
        except Exception as exc:
            logger.warning("session cache unavailable, reading the session table: %s", exc)
            data = None
        if data is not None:
            return dict(data)
        row = self.model.objects.filter(session_key=self.session_key, expire_date__gt=timezone.now()).first()
        if row is None:
            self._session_key = None  # as Django's stores do: a new key on the next save, never the stale one
            return {}
        data = self.decode(row.session_data)
        self._cache_set(key, data, self.get_expiry_age(expiry=row.expire_date))
        return dict(data)

    def exists(self, session_key: str | None) -> bool:
        if not session_key:
            return False
        try:
            if KEY_PREFIX + session_key in self.cache:
                return True
        except Exception as exc:
            logger.warning("session cache unavailable, asking the session table: %s", exc)
        return super().exists(session_key)

    def save(self, must_create: bool = False) -> None:
        try:
            super().save(must_create)
        except UpdateError:
            # The row is gone (signed out elsewhere, or during an outage): the cache's copy must not outlive it.
            self._cache_forget(KEY_PREFIX + (self.session_key or ""))
            raise
        self._cache_set(KEY_PREFIX + (self.session_key or ""), dict(self.items()), self.get_expiry_age())

    def delete(self, session_key: str | None = None) -> None:
        key = session_key if session_key is not None else self.session_key
        # The table first: its row is what makes a session valid, so signing out works whatever the cache does.
        super().delete(session_key)
        if key is not None:
            self._cache_forget(KEY_PREFIX + key)

    def _cache_set(self, key: str, data: dict[str, Any], timeout: int) -> None:
        try:
            self.cache.set(key, data, timeout)
        except Exception as exc:  # a warning, not Django's traceback per saved session while the cache is away
            logger.warning("session cache unavailable, the session is kept in its table only: %s", exc)

    def _cache_forget(self, key: str) -> None:
        try:
            self.cache.delete(key)
        except Exception as exc:
            logger.warning("session cache unavailable, its copy of a deleted session stays until it expires: %s", exc)

    # The console is served synchronously (WSGI); the async API goes through the same code, so no path writes the
    # table without the cache.
    async def aload(self) -> dict[str, Any]:
        return await sync_to_async(self.load)()

    async def aexists(self, session_key: str | None) -> bool:
        return await sync_to_async(self.exists)(session_key)

    async def asave(self, must_create: bool = False) -> None:
        await sync_to_async(self.save)(must_create)

    async def adelete(self, session_key: str | None = None) -> None:
        await sync_to_async(self.delete)(session_key)
