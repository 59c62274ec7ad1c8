"""Django's PostgreSQL backend with a health check that costs no round trip while the connection is alive.

Django checks a persistent connection before each request reuses it (CONN_HEALTH_CHECKS) by running
`SELECT 1`: one more round trip on every request, about 4 % of an approvals evaluate's CPU on a two-core
server. A connection the server has ended (restart, crash, terminated backend, idle timeout) has something
to read on its socket: the server's last error message, or the end of the stream. So only a readable socket
gets the real `SELECT 1`; a quiet one is alive as far as anything can tell without asking, which is also all
`SELECT 1` would learn before the next query. (A peer that vanished without closing the connection, a cut
network, is caught by neither check; the query fails, the API answers 503, and the connection is closed.)

It also reads timestamps with psycopg's own parser (in C with psycopg[binary]): Django registers a loader of its
own for `timestamptz` that subclasses psycopg's pure-Python one, which parses each value with a regular
expression (about 3 % of the web processes' CPU under the mixed load; every approval request has five of them).
Ours wraps psycopg's registered loader and labels the result with the connection's time zone exactly as
Django's does (`replace(tzinfo=...)`), so Django sees the same values.
"""

from __future__ import annotations

import functools
import select
from datetime import datetime, tzinfo
from typing import Any

from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper
from psycopg import adapt, adapters
from psycopg.pq import Format

_TIMESTAMPTZ = adapters.types["timestamptz"].oid
_PSYCOPG_TZ_LOADER = adapters.get_loader(_TIMESTAMPTZ, Format.TEXT)  # psycopg's own, before Django's


class _TzLoader(adapt.Loader):
    """Parse with psycopg's loader, then label with `timezone` (what Django's BaseTzLoader does)."""

    timezone: tzinfo | None = None  # Django's create_cursor compares this to the connection's time zone

    def __init__(self, oid: int, context: Any = None) -> None:
        super().__init__(oid, context)
        assert _PSYCOPG_TZ_LOADER is not None
        self._parse = _PSYCOPG_TZ_LOADER(oid, context).load

    def load(self, data: Any) -> datetime:
        parsed: datetime = self._parse(data)
        return parsed.replace(tzinfo=self.timezone)


@functools.cache
def _adapters(template: adapt.AdaptersMap, timezone: tzinfo | None) -> adapt.AdaptersMap:
    """Django's adapters for new connections, with our timestamptz loader in place of its own."""
    loader = type("TzLoader", (_TzLoader,), {"timezone": timezone, "__module__": __name__})
    context = adapt.AdaptersMap(template)
    context.register_loader(_TIMESTAMPTZ, loader)
    return context


class DatabaseWrapper(PostgresDatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        if "context" in params:  # psycopg 3: Django's adapters template (cached per time zone)
            params["context"] = _adapters(params["context"], self.timezone)
        return params

    def is_usable(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        try:
            socket = select.poll()  # poll, not select: a busy process may hold descriptors above 1024
            socket.register(self.connection.fileno(), select.POLLIN)
            events = socket.poll(0)  # data, end of stream, hang-up or error: all mean "ask the server"
        except (OSError, ValueError):  # the socket is gone
            return False
        return not events or super().is_usable()
