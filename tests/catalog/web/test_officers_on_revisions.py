"""Granting the safety-officer role is shown to the officers: the revisions page lists who may sign off and the
role's newest grants and removals from the audit log (made in /admin/, audited by catalog.core.admin_audit)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.core import roles
from tests.catalog.core.test_admin_audit import post, user_form

pytestmark = pytest.mark.django_db


def _grant(admin_client: Client, user: Any, *, keep: bool = True) -> None:
    officer = Group.objects.get(name=roles.SAFETY_OFFICER)
    groups = (
        {g.pk for g in user.groups.all()} | {officer.pk} if keep else {g.pk for g in user.groups.all()} - {officer.pk}
    )
    post(admin_client, f"/admin/auth/user/{user.pk}/change/", user_form(user, groups=sorted(groups)))


def _text(client: Client) -> str:
    page = client.get("/revisions/")
    assert page.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))


def test_an_officer_sees_who_may_sign_off_and_each_grant_and_removal_of_the_role(
    admin_client: Client, client: Client, make_user: Callable[..., Any]
) -> None:
    olga = make_user("olga", roles.SAFETY_OFFICER)
    sam = make_user("sam", roles.ON_CALL)
    client.force_login(olga)
    assert "1 safety officer: olga" in _text(client)
    assert "No grant or removal of the role is on record." in _text(client)

    _grant(admin_client, sam)
    text = _text(client)
    assert "2 safety officers: olga , sam" in text
    assert re.search(r"sam granted user:admin", text), text

    _grant(admin_client, sam, keep=False)
    text = _text(client)
    assert "1 safety officer: olga" in text
    assert re.search(r"sam removed user:admin .* sam granted user:admin", text), text


def test_other_roles_do_not_get_the_officers_list(client: Client, make_user: Callable[..., Any]) -> None:
    make_user("olga", roles.SAFETY_OFFICER)
    client.force_login(make_user("oscar", roles.ON_CALL))
    assert "Who may sign off" not in _text(client)


def test_the_list_costs_the_same_queries_however_often_the_role_moved(
    admin_client: Client, client: Client, make_user: Callable[..., Any]
) -> None:
    client.force_login(make_user("olga", roles.SAFETY_OFFICER))
    sam = make_user("sam", roles.ON_CALL)
    _grant(admin_client, sam)
    with CaptureQueriesContext(connection) as once:
        client.get("/revisions/")
    for keep in (False, True, False, True):
        _grant(admin_client, sam, keep=keep)
    with CaptureQueriesContext(connection) as often:
        page = client.get("/revisions/")
    assert len(often) == len(once), [q["sql"] for q in often]
    assert page.content.decode().count("user:admin") == 5
