"""Console sessions (Django's cached_db backend) and the signed-in user: what a person relies on, and what a page
view costs in queries."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.cache import caches
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db


def signed_in_with_password(make_user: Any, *groups: str, username: str = "sina") -> tuple[Client, Any]:
    user = make_user(username, *groups)
    client = Client()
    response = client.post("/login/", {"username": username, "password": f"pw-{username}"})
    assert response.status_code == 302, response.content
    return client, user


def test_a_signed_in_person_reads_pages_with_one_read_each_of_session_user_and_groups(
    make_user: Any, django_assert_num_queries: Any
) -> None:
    client, _ = signed_in_with_password(make_user, "catalog-admin")
    assert client.get("/tokens/").status_code == 200  # the first page after sign-in may still write the session
    with django_assert_num_queries(3):  # user, groups, the tokens: the session comes from the cache
        body = client.get("/tokens/").content.decode()
    assert "sina" in body and "API tokens" in body


def test_an_expired_session_signs_the_person_out(make_user: Any) -> None:
    client, _ = signed_in_with_password(make_user)
    assert client.get("/catalog/").status_code == 200
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    # The cached copy is stored with the session's own expiry, so it is gone by then too.
    caches[settings.SESSION_CACHE_ALIAS].clear()
    response = client.get("/catalog/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_a_deactivated_or_deleted_user_is_signed_out(make_user: Any) -> None:
    client, user = signed_in_with_password(make_user)
    user.is_active = False
    user.save()
    assert client.get("/catalog/")["Location"].startswith("/login/")
    client, user = signed_in_with_password(make_user, username="tom")
    assert client.get("/catalog/").status_code == 200
    user.delete()
    assert client.get("/catalog/")["Location"].startswith("/login/")


def test_a_session_survives_a_cache_that_lost_it(make_user: Any) -> None:
    """A cache restart or eviction does not sign people out: cached_db reads the session table then."""
    client, _ = signed_in_with_password(make_user)
    caches[settings.SESSION_CACHE_ALIAS].clear()
    assert client.get("/catalog/").status_code == 200


def test_a_forged_session_cookie_is_no_session(client: Client, make_user: Any) -> None:
    make_user("sina")
    client.cookies["sessionid"] = "x" * 32
    assert client.get("/catalog/")["Location"].startswith("/login/")


def test_groups_are_read_per_request_not_kept(make_user: Any) -> None:
    client, user = signed_in_with_password(make_user)
    assert client.get("/tokens/").status_code == 403
    from django.contrib.auth.models import Group

    user.groups.add(Group.objects.get_or_create(name="catalog-admin")[0])
    assert client.get("/tokens/").status_code == 200
