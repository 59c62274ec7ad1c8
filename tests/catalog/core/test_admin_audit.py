"""Every write made in /admin/ leaves an audit event, written in the admin request's transaction and attributed to
the signed-in admin: role, group and permission changes, user flags, deletes (one object or "delete selected")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.test import Client
from django.utils import timezone

from catalog.core.admin_audit import audit_log_entries
from catalog.core.audit import audit_verify
from catalog.models import ApiToken, AuditEvent

pytestmark = pytest.mark.django_db

User = get_user_model()


@pytest.fixture
def root() -> Any:
    return User.objects.create_superuser("root", "root@example.org", "a long admin password")


@pytest.fixture
def admin_client(root: Any) -> Client:
    client = Client()
    client.force_login(root)
    return client


def user_form(user: Any, **fields: Any) -> dict[str, Any]:
    """The admin's user change form as a browser submits it (checkboxes present only when ticked)."""
    joined = timezone.localtime(user.date_joined)
    day, time = joined.strftime("%Y-%m-%d"), joined.strftime("%H:%M:%S")
    data: dict[str, Any] = {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        # A field with a callable default carries its initial value along (the admin's show_hidden_initial).
        **{"date_joined_0": day, "date_joined_1": time, "initial-date_joined_0": day, "initial-date_joined_1": time},
        "groups": [g.pk for g in user.groups.all()],
        "user_permissions": [p.pk for p in user.user_permissions.all()],
    }
    for flag in ("is_active", "is_staff", "is_superuser"):
        if getattr(user, flag):
            data[flag] = "on"
    for key, value in fields.items():
        if value is False:
            data.pop(key, None)
        else:
            data[key] = "on" if value is True else value
    return data


def events(*actions: str) -> list[tuple[str, str, str, Any, Any]]:
    rows = AuditEvent.objects.filter(action__in=actions).order_by("pk")
    return [(e.actor, e.action, e.object_id, e.before, e.after) for e in rows]


def post(client: Client, path: str, data: dict[str, Any]) -> None:
    response = client.post(path, data)
    assert response.status_code == 302, response.content.decode()[:3000]


def test_a_users_groups_changed_in_the_admin_are_audited(admin_client: Client, make_user: Callable[..., Any]) -> None:
    editor = make_user("editor", "approver-medication")
    officer, approver = Group.objects.get(name="approver-medication"), Group.objects.get_or_create(name="officer")[0]
    post(admin_client, f"/admin/auth/user/{editor.pk}/change/", user_form(editor, groups=[approver.pk]))
    assert set(editor.groups.values_list("name", flat=True)) == {"officer"}
    assert events("auth.user.groups.added", "auth.user.groups.removed") == [
        ("user:root", "auth.user.groups.removed", "editor", {"groups": [officer.name]}, None),
        ("user:root", "auth.user.groups.added", "editor", None, {"groups": ["officer"]}),
    ]
    ((actor, _, object_id, _, after),) = events("admin.changed")
    assert (actor, object_id, after["object"]) == ("user:root", str(editor.pk), "editor")
    assert after["change"] == [{"changed": {"fields": ["Groups"]}}]
    assert audit_verify().ok


def test_flags_flipped_in_the_admin_are_audited(admin_client: Client, make_user: Callable[..., Any]) -> None:
    editor = make_user("editor")
    post(admin_client, f"/admin/auth/user/{editor.pk}/change/", user_form(editor, is_staff=True, is_superuser=True))
    post(
        admin_client,
        f"/admin/auth/user/{editor.pk}/change/",
        user_form(User.objects.get(pk=editor.pk), is_active=False),
    )
    assert events("auth.user.flags.changed") == [
        (
            "user:root",
            "auth.user.flags.changed",
            "editor",
            {"is_staff": False, "is_superuser": False},
            {"is_staff": True, "is_superuser": True},
        ),
        ("user:root", "auth.user.flags.changed", "editor", {"is_active": True}, {"is_active": False}),
    ]


def test_permissions_granted_to_a_user_and_to_a_group_are_audited(
    admin_client: Client, make_user: Callable[..., Any]
) -> None:
    editor = make_user("editor")
    view_tool = Permission.objects.get(codename="view_tool", content_type__app_label="catalog")
    post(admin_client, f"/admin/auth/user/{editor.pk}/change/", user_form(editor, user_permissions=[view_tool.pk]))
    group = Group.objects.create(name="readers")
    post(admin_client, f"/admin/auth/group/{group.pk}/change/", {"name": "readers", "permissions": [view_tool.pk]})
    post(admin_client, f"/admin/auth/group/{group.pk}/change/", {"name": "readers", "permissions": []})
    assert events("auth.user.permissions.added", "auth.group.permissions.added", "auth.group.permissions.removed") == [
        ("user:root", "auth.user.permissions.added", "editor", None, {"permissions": ["catalog.view_tool"]}),
        ("user:root", "auth.group.permissions.added", "readers", None, {"permissions": ["catalog.view_tool"]}),
        ("user:root", "auth.group.permissions.removed", "readers", {"permissions": ["catalog.view_tool"]}, None),
    ]


def test_a_user_added_in_the_admin_is_audited(admin_client: Client) -> None:
    password = "a long enough password for a new colleague"
    post(
        admin_client,
        "/admin/auth/user/add/",
        {"username": "newcomer", "password1": password, "password2": password, "usable_password": "true"},
    )
    newcomer = User.objects.get(username="newcomer")
    ((actor, action, object_id, _, after),) = events("admin.added")
    assert (actor, action, object_id, after["object"]) == ("user:root", "admin.added", str(newcomer.pk), "newcomer")


def test_a_token_deleted_in_the_admin_is_audited(admin_client: Client, make_token: Callable[..., str]) -> None:
    make_token("runtime-prod")
    token = ApiToken.objects.get(name="runtime-prod")
    post(admin_client, f"/admin/catalog/apitoken/{token.pk}/delete/", {"post": "yes"})
    assert not ApiToken.objects.exists()
    ((actor, action, object_id, _, after),) = events("admin.deleted")
    assert (actor, action, object_id) == ("user:root", "admin.deleted", str(token.pk))
    assert after["object"] == str(token) and after["object"].startswith("runtime-prod (cnd_")
    assert AuditEvent.objects.get(action="admin.deleted").object_type == "catalog.apitoken"


def test_delete_selected_audits_every_object(admin_client: Client, make_token: Callable[..., str]) -> None:
    """The admin writes the LogEntries of "delete selected" in one bulk INSERT (no save signal): still audited."""
    for name in ("one", "two", "three"):
        make_token(name)
    pks = list(ApiToken.objects.filter(name__in=["one", "two"]).values_list("pk", flat=True))
    post(
        admin_client,
        "/admin/catalog/apitoken/",
        {"action": "delete_selected", "_selected_action": pks, "post": "yes"},
    )
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["three"]
    deleted = AuditEvent.objects.filter(action="admin.deleted")
    assert sorted(deleted.values_list("object_id", flat=True)) == sorted(str(pk) for pk in pks)
    assert set(deleted.values_list("actor", flat=True)) == {"user:root"}


def test_a_group_deleted_in_the_admin_is_audited(admin_client: Client) -> None:
    group = Group.objects.create(name="temporary")
    post(admin_client, f"/admin/auth/group/{group.pk}/delete/", {"post": "yes"})
    assert [(a, o, after["object"]) for a, _, o, _, after in events("admin.deleted")] == [
        ("user:root", str(group.pk), "temporary")
    ]


def test_group_changes_outside_the_admin_are_left_to_their_own_code(make_user: Callable[..., Any]) -> None:
    """The receivers audit admin requests only: services write their own events, and a fixture's groups none."""
    editor = make_user("editor", "approver-medication")
    editor.is_staff = True
    editor.save()
    assert not AuditEvent.objects.exists()


def test_a_refused_admin_form_writes_nothing(admin_client: Client, make_user: Callable[..., Any]) -> None:
    editor = make_user("editor")
    response = admin_client.post(f"/admin/auth/user/{editor.pk}/change/", user_form(editor, username=""))
    assert response.status_code == 200  # the form again, with its error
    assert not AuditEvent.objects.exists()


def test_each_log_entry_is_audited_once(root: Any) -> None:
    """Two requests reading the same range of LogEntries (one committed while the other ran) audit each once."""
    group = Group.objects.create(name="g")
    with transaction.atomic():
        LogEntry.objects.log_actions(root.pk, [group], DELETION, "")
        assert audit_log_entries(after_pk=0) == 1
        assert audit_log_entries(after_pk=0) == 0
    (event,) = AuditEvent.objects.all()
    assert event.object_type == ContentType.objects.get_for_model(Group).app_label + ".group"
