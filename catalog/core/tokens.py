"""Service API tokens issued and revoked in the console. Each write records its audit event in the same
transaction; the raw token leaves this module once, in the returned IssuedToken, and is never stored
or audited (only its SHA-256 and a recognisable prefix are)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.core.permissions import may_manage_api_tokens
from catalog.models import ApiToken

DEFAULT_MAX_DAYS = 365
DEFAULT_EXPIRY_DAYS = 90  # what the console's form proposes and what `create_api_token` uses when not told
PREFIX_LENGTH = 10  # "cnd_" and six random characters: enough to recognise a token in a list or a log


def token_max_days() -> int:
    """How far ahead a console-issued token may expire (setting CONDOR_TOKEN_MAX_DAYS, default 365)."""
    return int(getattr(settings, "CONDOR_TOKEN_MAX_DAYS", DEFAULT_MAX_DAYS))


class TokenRefused(Exception):
    """A refused token action. `problems` maps each form field (None: the request as a whole) to what is
    wrong with it, for the person who tried; all of them at once, so one round trip fixes everything."""

    def __init__(self, problems: Mapping[str | None, str], *, forbidden: bool = False):
        self.problems = dict(problems)
        self.message = "; ".join(f"{field}: {text}" if field else text for field, text in self.problems.items())
        super().__init__(self.message)
        self.forbidden = forbidden


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    raw: str  # shown to the person once, right now; nowhere else holds it


def _scope_problem(wanted: set[str]) -> str | None:
    unknown = sorted(wanted - set(ApiToken.SCOPES))
    if unknown:
        problem = _("unknown scope %(scopes)s; choose from %(known)s") % {
            "scopes": ", ".join(unknown),
            "known": ", ".join(ApiToken.SCOPES),
        }
        if "catalog" in unknown:  # the scope before the split (migration 0013)
            problem += " " + _("(catalog is now catalog:read to read and export, catalog:write to import)")
        return problem
    if not wanted:
        return _("choose at least one scope: the API areas this service may call")
    return None


def _expiry_problem(expires_at: datetime | None, now: datetime) -> str | None:
    if expires_at is None:
        return _("every token expires: choose the last day it may be used")
    if expires_at <= now:
        return _("the expiry date must be in the future")
    max_days = token_max_days()
    if timezone.localdate(expires_at) > timezone.localdate(now) + timedelta(days=max_days):
        return _("at most %(days)s days ahead") % {"days": max_days}
    return None


def api_token_create(*, name: str, scopes: Iterable[str], expires_at: datetime | None, created_by: Any) -> IssuedToken:
    """Issue a token named `name` for `scopes`, usable until `expires_at` (in the future, at most
    CONDOR_TOKEN_MAX_DAYS days ahead, counted in calendar days of the console's time zone). The admin who
    issues it owns it: its catalog imports name them as the importer."""
    if not may_manage_api_tokens(created_by):
        raise TokenRefused({None: _("only a catalog admin may issue API tokens")}, forbidden=True)
    owner = created_by if getattr(created_by, "pk", None) else None
    return api_token_issue(
        name=name, scopes=scopes, expires_at=expires_at, owner=owner, actor=Actor.for_user(created_by)
    )


def api_token_issue(
    *, name: str, scopes: Iterable[str], expires_at: datetime | None, owner: Any, actor: Actor
) -> IssuedToken:
    """The one way a token comes to exist (the console and `manage.py create_api_token`): the same checks, the
    same bounds on its expiry, the same audit event."""
    name = (name or "").strip()
    wanted = set(scopes)
    problems = _issue_problems(name, wanted, expires_at)
    if problems:
        raise TokenRefused(problems)
    clean_scopes = [s for s in ApiToken.SCOPES if s in wanted]  # one stable order, whatever order they came in
    raw = ApiToken.generate()
    try:
        with transaction.atomic():
            token = ApiToken.objects.create(
                name=name,
                prefix=raw[:PREFIX_LENGTH],
                token_hash=ApiToken.hash(raw),
                scopes=clean_scopes,
                expires_at=expires_at,
                owner=owner,
            )
            audit_record(
                actor=actor,
                action=AuditAction.CATALOG_API_TOKEN_CREATED,
                object_type="catalog.api_token",
                object_id=name,
                after={
                    "prefix": token.prefix,
                    "scopes": clean_scopes,
                    "expires_at": expires_at,
                    "token": token.pk,
                    "owner": token.owner.username if token.owner else None,
                },
            )
    except IntegrityError as exc:  # two admins picked the same name at the same moment
        raise TokenRefused({"name": _name_taken(name)}) from exc
    return IssuedToken(token=token, raw=raw)


def _name_taken(name: str) -> str:
    return _("a token named “%(name)s” already exists (revoked ones keep their name); pick another name") % {
        "name": name
    }


def _issue_problems(name: str, wanted: set[str], expires_at: datetime | None) -> dict[str | None, str]:
    problems: dict[str | None, str] = {}
    max_length = ApiToken._meta.get_field("name").max_length or 100
    if not name:
        problems["name"] = _("name the service that will use this token, e.g. runtime-prod")
    elif len(name) > max_length:
        problems["name"] = _("at most %(n)s characters") % {"n": max_length}
    # Case-insensitive: "Runtime" next to "runtime" in the list is a mistake waiting to be revoked wrongly.
    elif ApiToken.objects.filter(name__iexact=name).exists():
        problems["name"] = _name_taken(name)
    if scope_problem := _scope_problem(wanted):
        problems["scopes"] = scope_problem
    if expiry_problem := _expiry_problem(expires_at, timezone.now()):
        problems["expires_on"] = expiry_problem
    return problems


def api_token_revoke(*, token_id: int, revoked_by: Any) -> ApiToken:
    """Revoke at once: ScopedBearer reads the token row on every call, so its next request gets a 401."""
    if not may_manage_api_tokens(revoked_by):
        raise TokenRefused({None: _("only a catalog admin may revoke API tokens")}, forbidden=True)
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().get(pk=token_id)
        if token.revoked_at is not None:
            raise TokenRefused({None: _("token “%(name)s” was already revoked") % {"name": token.name}})
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record(
            actor=Actor.for_user(revoked_by),
            action=AuditAction.CATALOG_API_TOKEN_REVOKED,
            object_type="catalog.api_token",
            object_id=token.name,
            before={"prefix": token.prefix, "scopes": token.scopes, "expires_at": token.expires_at, "token": token.pk},
            after={"revoked_at": token.revoked_at},
        )
    return token
