"""Console sessions and signed-in users, read by queries compiled once.

Every console request reads its session, then its user (and most pages the user's groups). Django compiles
each of those queries anew per request, which cost more CPU than running them; these subclasses of Django's
database session store and model backend run the same reads through catalog.precompiled instead.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import backends, get_user_model
from django.contrib.sessions.backends import db
from django.contrib.sessions.models import Session
from django.utils import timezone

from catalog.precompiled import PrecompiledQuery

_SESSION_BY_KEY = PrecompiledQuery(lambda key: Session.objects.filter(session_key=key), "key")
_USER_BY_PK = PrecompiledQuery(lambda pk: get_user_model()._default_manager.filter(pk=pk), "pk:int")


class SessionStore(db.SessionStore):
    """Django's database sessions (SESSION_ENGINE = "condor_admin.sessions")."""

    def _get_session_from_db(self) -> Any:
        found = _SESSION_BY_KEY.objects(self.session_key) if self.session_key else []
        if found and found[0].expire_date > timezone.now():
            return found[0]
        self._session_key = None
        return None


class ModelBackend(backends.ModelBackend):
    """Django's model backend (AUTHENTICATION_BACKENDS); only the per-request user read differs."""

    def get_user(self, user_id: Any) -> Any:
        try:
            found = _USER_BY_PK.objects(int(user_id))
        except (TypeError, ValueError):
            return None
        user = found[0] if found else None
        return user if user is not None and self.user_can_authenticate(user) else None
