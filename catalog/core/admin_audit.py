"""Every write made in /admin/ is audited, in the admin request's own transaction (issue 19).

Django's admin records each add, change and delete it makes as a LogEntry (one row per object, the
"delete selected" action included, as it writes them in bulk); it has to, for its history pages. So the one
place that cannot miss an admin write is the request: `AdminAuditMiddleware` runs every signed-in admin POST in
one transaction and, before it commits, writes an audit event for each LogEntry the request wrote. The
LogEntry says what was changed but not how roles moved: the signal receivers below add, for the same request,
an event per group or permission added to or removed from a user or a group (m2m_changed, whichever form or
relation side made it) and per flip of a user's is_staff, is_superuser or is_active flag (pre_save).

Outside an admin request these receivers do nothing: services write their own audit events, and the command
line (manage.py) is audited by its commands.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.db.models.signals import m2m_changed, pre_save
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.models import AuditEvent

# The admin whose request is running, set by the middleware for the request's duration (one per thread).
_admin: ContextVar[User | None] = ContextVar("condor_admin_actor", default=None)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
FLAGS = ("is_staff", "is_superuser", "is_active")
LOG_ACTIONS = {
    ADDITION: AuditAction.ADMIN_ADDED,
    CHANGE: AuditAction.ADMIN_CHANGED,
    DELETION: AuditAction.ADMIN_DELETED,
}


@dataclass(frozen=True)
class Relation:
    """An audited relation, from its owning side: that side's object type, the field's name in events, and the
    action an addition and a removal write."""

    object_type: str
    field: str
    added: AuditAction
    removed: AuditAction


# Each audited relation, by its through model.
RELATIONS: dict[Any, Relation] = {
    User.groups.through: Relation(
        "auth.user", "groups", AuditAction.AUTH_USER_GROUPS_ADDED, AuditAction.AUTH_USER_GROUPS_REMOVED
    ),
    User.user_permissions.through: Relation(
        "auth.user", "permissions", AuditAction.AUTH_USER_PERMISSIONS_ADDED, AuditAction.AUTH_USER_PERMISSIONS_REMOVED
    ),
    Group.permissions.through: Relation(
        "auth.group",
        "permissions",
        AuditAction.AUTH_GROUP_PERMISSIONS_ADDED,
        AuditAction.AUTH_GROUP_PERMISSIONS_REMOVED,
    ),
}


class AdminAuditMiddleware:
    """Runs each signed-in POST (PUT, PATCH, DELETE) under /admin/ in one transaction with its audit events."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if (
            request.method in SAFE_METHODS
            or not request.path.startswith(reverse("admin:index"))
            or not isinstance(user, User)  # the admin's sign-in page: nobody to attribute a write to yet
        ):
            return self.get_response(request)
        with transaction.atomic():
            token = _admin.set(user)
            try:
                marker = LogEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
                response = self.get_response(request)
                if response.status_code >= 500:
                    # The view failed (Django turned its exception into this answer): nothing it wrote stands,
                    # so no LogEntry is audited as done when it was not.
                    transaction.set_rollback(True)
                else:
                    audit_log_entries(after_pk=marker)
            finally:
                _admin.reset(token)
        return response


def _change_message(raw: str) -> Any:
    # The admin stores a JSON list of what changed (Django's own format), or plain text from custom code.
    try:
        return json.loads(raw) if raw.startswith("[") else raw
    except ValueError:
        return raw


def audit_log_entries(*, after_pk: int) -> int:
    """One audit event per LogEntry after `after_pk` that has none yet; returns how many. Entries a concurrent
    admin request committed meanwhile already have theirs (they commit together), so nothing is audited twice."""
    entries = list(LogEntry.objects.filter(pk__gt=after_pk).select_related("user", "content_type").order_by("pk"))
    if not entries:
        return 0
    audited = set(
        AuditEvent.objects.filter(
            action__in=LOG_ACTIONS.values(), after__log_entry__in=[entry.pk for entry in entries]
        ).values_list("after__log_entry", flat=True)
    )
    written = 0
    for entry in entries:
        if entry.pk in audited or entry.action_flag not in LOG_ACTIONS:
            continue
        # The stubs leave LogEntry's foreign keys untyped: they are a user and (nullable) a content type.
        user = cast(User, entry.user)
        content_type = cast(ContentType | None, entry.content_type)
        audit_record(
            actor=Actor.for_user(user),
            action=LOG_ACTIONS[entry.action_flag],
            object_type=f"{content_type.app_label}.{content_type.model}" if content_type else "unknown",
            object_id=entry.object_id or "",
            after={"log_entry": entry.pk, "object": entry.object_repr, "change": _change_message(entry.change_message)},
        )
        written += 1
    return written


def _label(obj: models.Model) -> str:
    if isinstance(obj, Permission):
        return f"{obj.content_type.app_label}.{obj.codename}"
    if isinstance(obj, User):
        return obj.get_username()
    return str(obj)


def _labels(model: type[models.Model], pks: Iterable[Any]) -> list[str]:
    queryset = model._default_manager.filter(pk__in=list(pks))
    if model is Permission:
        queryset = queryset.select_related("content_type")
    return sorted(_label(obj) for obj in queryset)


def _record_relation(admin: User, owner: models.Model, relation: Relation, added: bool, labels: list[str]) -> None:
    audit_record(
        actor=Actor.for_user(admin),
        action=relation.added if added else relation.removed,
        object_type=relation.object_type,
        object_id=_label(owner),
        before=None if added else {relation.field: labels},
        after={relation.field: labels} if added else None,
    )


@receiver(m2m_changed)
def relation_changed(
    sender: Any, instance: models.Model, action: str, reverse: bool, model: Any, pk_set: set[Any] | None, **_: Any
) -> None:
    """A group or permission added to or removed from a user or a group, from either side of the relation."""
    admin = _admin.get()
    if admin is None or sender not in RELATIONS:
        return
    if action == "pre_clear":
        # post_clear says nothing of what was cleared: remember it now.
        own, other = _columns(sender, instance)
        cleared = sender.objects.filter(**{own: instance.pk}).values_list(other, flat=True)
        instance._condor_cleared = set(cleared)  # type: ignore[attr-defined]
        return
    if action == "post_clear":
        pk_set = getattr(instance, "_condor_cleared", set())
    elif action not in ("post_add", "post_remove"):
        return
    if not pk_set:
        return
    relation = RELATIONS[sender]
    added = action == "post_add"
    if not reverse:
        _record_relation(admin, instance, relation, added, _labels(model, pk_set))
        return
    # From the other side (group.user_set.add(user), permission.group_set.remove(group)): one event per owner.
    for owner in model._default_manager.filter(pk__in=list(pk_set)):
        _record_relation(admin, owner, relation, added, [_label(instance)])


def _columns(through: Any, instance: models.Model) -> tuple[str, str]:
    """The through model's column pointing at `instance` and the one pointing at the other side."""
    own = other = ""
    for field in through._meta.get_fields():
        if field.many_to_one:
            if field.related_model is type(instance) and not own:
                own = str(field.attname)
            else:
                other = str(field.attname)
    return own, other


@receiver(pre_save, sender=User)
def user_flags_changed(sender: Any, instance: User, raw: bool, update_fields: Any, **_: Any) -> None:
    """A user made staff or superuser, or (de)activated, in the admin: one event with the flags before and after."""
    admin = _admin.get()
    if admin is None or raw or instance._state.adding:
        return  # a new user's creation is the LogEntry's addition event
    if update_fields is not None and not set(FLAGS) & set(update_fields):
        return
    stored = User.objects.filter(pk=instance.pk).values(*FLAGS).first()
    if stored is None:
        return
    changed = {flag for flag in FLAGS if stored[flag] != getattr(instance, flag)}
    if not changed:
        return
    audit_record(
        actor=Actor.for_user(admin),
        action=AuditAction.AUTH_USER_FLAGS_CHANGED,
        object_type="auth.user",
        object_id=instance.get_username(),
        before={flag: stored[flag] for flag in sorted(changed)},
        after={flag: getattr(instance, flag) for flag in sorted(changed)},
    )
