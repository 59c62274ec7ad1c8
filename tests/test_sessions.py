"""Console sessions (Django's cached_db backend, carrying on without its cache) and the signed-in user: what a
person relies on, what a page view costs in queries, the idle and absolute limits, and the password rules."""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.models import Session
from django.core.cache import caches
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from condor_admin import middleware

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


# --- the session's limits: idle (CONDOR_SESSION_IDLE_MINUTES, 30) and absolute (SESSION_COOKIE_AGE, 12 h) ---------

MINUTE = 60


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The clock the session limits read, moved by hand: `clock.at = seconds after the start`."""

    class Clock:
        start = time.time()
        at = 0.0

    monkeypatch.setattr(middleware, "now", lambda: Clock.start + Clock.at)
    return Clock


def signed_out_for(response: Any, path: str) -> bool:
    return response.status_code == 302 and response["Location"] == f"/login/?next={quote(path, safe='/')}"


def test_thirty_minutes_without_activity_sign_the_person_out_and_the_sign_in_page_says_why(
    make_user: Any, clock: Any
) -> None:
    client, _ = signed_in_with_password(make_user)
    clock.at = 29 * MINUTE
    assert client.get("/catalog/").status_code == 200  # activity: the idle time starts again
    clock.at = (29 + 29) * MINUTE
    assert client.get("/catalog/").status_code == 200
    clock.at = (29 + 29 + 30) * MINUTE
    response = client.get("/catalog/?q=warfarin")
    assert signed_out_for(response, "/catalog/?q=warfarin")
    assert "_auth_user_id" not in client.session
    page = client.get(response["Location"]).content.decode()
    assert "You were signed out after 30 minutes without activity. Please sign in again." in page


def test_the_idle_limit_is_a_setting(make_user: Any, clock: Any, settings: Any) -> None:
    settings.CONDOR_SESSION_IDLE_MINUTES = 5
    client, _ = signed_in_with_password(make_user)
    clock.at = 4 * MINUTE
    assert client.get("/catalog/").status_code == 200
    clock.at = 9 * MINUTE
    assert signed_out_for(client.get("/catalog/"), "/catalog/")


def test_a_sign_in_ends_after_twelve_hours_however_busy_the_person_is(make_user: Any, clock: Any) -> None:
    client, _ = signed_in_with_password(make_user)
    for minutes in range(20, 12 * 60, 20):
        clock.at = minutes * MINUTE
        assert client.get("/catalog/").status_code == 200, minutes
    clock.at = 12 * 60 * MINUTE
    response = client.get("/catalog/")
    assert signed_out_for(response, "/catalog/")
    page = client.get(response["Location"]).content.decode()
    assert "You were signed out: a sign-in lasts at most 12 hours. Please sign in again." in page


def test_the_session_row_ends_at_the_absolute_limit_and_activity_does_not_extend_it(make_user: Any, clock: Any) -> None:
    """The table and the cookie end with the sign-in too (set_expiry to a date), not 12 hours after the last save."""
    before = timezone.now()
    client, _ = signed_in_with_password(make_user)
    row = Session.objects.get()
    assert timedelta(hours=12) - timedelta(seconds=5) < row.expire_date - before <= timedelta(hours=12, seconds=5)
    assert 12 * 3600 - 5 < client.cookies["sessionid"]["max-age"] <= 12 * 3600
    clock.at = 5 * MINUTE
    assert client.get("/catalog/").status_code == 200  # writes the activity
    assert Session.objects.get().expire_date == row.expire_date


def test_the_activity_is_written_at_most_once_a_minute(
    make_user: Any, clock: Any, django_assert_num_queries: Any
) -> None:
    client, _ = signed_in_with_password(make_user, "catalog-admin")
    clock.at = 10
    assert client.get("/tokens/").status_code == 200  # the first page after sign-in stores the language
    clock.at = 30
    with django_assert_num_queries(3):  # user, groups, the tokens: no session write within the minute
        assert client.get("/tokens/").status_code == 200
    clock.at = 61
    with django_assert_num_queries(6):  # and once it has passed, the session's UPDATE (with its savepoint)
        assert client.get("/tokens/").status_code == 200


def test_the_pages_own_polls_do_not_keep_a_session_alive(make_user: Any, clock: Any) -> None:
    """A console left open on a ward PC polls the approvals counts every 10 s: that is not a person at work."""
    client, _ = signed_in_with_password(make_user)
    poll = {"HX-Request": "true", "X-Condor-Poll": "true", "HX-Current-URL": "http://testserver/catalog/"}
    for minutes in (10, 20, 29):
        clock.at = minutes * MINUTE
        assert client.get("/approvals/counts", headers=poll).status_code == 200
    clock.at = 31 * MINUTE
    response = client.get("/approvals/counts", headers=poll)
    assert response.status_code == 401 and response["HX-Redirect"] == "/login/?next=%2Fcatalog%2F"


def test_an_htmx_request_after_the_session_ended_sends_the_whole_page_to_sign_in(make_user: Any, clock: Any) -> None:
    """Not a sign-in form swapped into the catalog table: a 401 whose HX-Redirect takes the page to sign in, and
    back to the page the person was on (not the fragment's URL) afterwards."""
    client, _ = signed_in_with_password(make_user)
    clock.at = 31 * MINUTE
    htmx = {"HX-Request": "true", "HX-Current-URL": "http://testserver/catalog/?module=medication"}
    response = client.get("/catalog/?module=medication&page=2", headers=htmx)
    assert response.status_code == 401 and response.content == b""
    assert response["HX-Redirect"] == "/login/?next=%2Fcatalog%2F%3Fmodule%3Dmedication"
    page = client.get(response["HX-Redirect"]).content.decode()  # the message waits for the page
    assert "You were signed out after 30 minutes without activity." in page
    # Without htmx the same request is the usual redirect; a stranger's htmx request gets the 401 too.
    assert Client().get("/catalog/").status_code == 302
    assert Client().get("/catalog/", headers={"HX-Request": "true"}).status_code == 401


def test_the_message_is_german_for_a_german_browser(make_user: Any, clock: Any) -> None:
    client, _ = signed_in_with_password(make_user)
    clock.at = 31 * MINUTE
    response = client.get("/catalog/", headers={"Accept-Language": "de"})
    page = client.get(response["Location"], headers={"Accept-Language": "de"}).content.decode()
    assert "Sie wurden nach 30 Minuten ohne Aktivität abgemeldet." in page


# --- the cache (Redis) down ------------------------------------------------------------------------------------


def test_with_the_cache_down_a_signed_in_person_keeps_working_and_can_sign_out(
    make_user: Any, settings: Any, cache_down: None, caplog: pytest.LogCaptureFixture
) -> None:
    client, _ = signed_in_with_password(make_user, "catalog-admin")  # signed in while the cache is down
    assert client.get("/tokens/").status_code == 200
    assert client.post("/language", {"language": "de", "next": "/catalog/"}).status_code == 302  # a session write
    assert "Katalog" in client.get("/catalog/").content.decode()
    assert "session cache unavailable" in caplog.text
    assert client.post("/logout/").status_code == 302
    assert client.get("/catalog/")["Location"].startswith("/login/")
    assert not Session.objects.filter(session_data__contains="_auth_user_id").exists()


def test_a_session_signed_out_while_the_cache_was_away_serves_at_most_a_minute_once_it_is_back(
    make_user: Any, settings: Any, clock: Any
) -> None:
    """A cache that comes back with its old contents (a network split, not a restart) still holds the copy of a
    session signed out meanwhile. A stolen cookie of it works until the session's next write, a minute at most."""
    client, _ = signed_in_with_password(make_user)
    assert client.get("/catalog/").status_code == 200  # the session is in the cache now
    stolen = client.cookies["sessionid"].value
    reachable = settings.CACHES
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        location = f"redis://127.0.0.1:{closed.getsockname()[1]}/0"
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": location}}
        assert client.post("/logout/").status_code == 302  # the row is deleted; the cache's copy is out of reach
    settings.CACHES = reachable
    thief = Client()
    thief.cookies["sessionid"] = stolen
    clock.at = 30
    assert thief.get("/catalog/").status_code == 200  # the old copy, read from the cache
    clock.at = 61
    assert thief.get("/catalog/").status_code == 400  # its write finds no row: Django's SessionInterrupted
    assert thief.get("/catalog/")["Location"].startswith("/login/")  # and the copy is gone with it


# --- passwords -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("password", "refusal"),
    [
        ("condor-demo", "This password is too short. It must contain at least 12 characters."),
        ("482913776120", "This password is entirely numeric."),
        ("password1234", "This password is too common."),
        ("sina.schmidt-ward", "The password is too similar to the username."),
    ],
)
def test_a_password_a_person_chooses_has_twelve_characters_and_is_not_guessable(
    make_user: Any, password: str, refusal: str
) -> None:
    user = make_user("sina.schmidt-ward")
    with pytest.raises(ValidationError) as refused:
        validate_password(password, user)
    assert refusal in refused.value.messages
    validate_password("Tiefgarage-Nord-7", user)  # twelve or more, not common, not numeric, not the name


def test_the_admin_refuses_a_short_password_for_a_new_account(make_user: Any) -> None:
    make_user("root", is_staff=True, is_superuser=True)
    client = Client()
    client.post("/admin/login/", {"username": "root", "password": "pw-root"})
    form = {"username": "nurse.ute", "usable_password": "true", "password1": "ward3-night", "password2": "ward3-night"}
    response = client.post("/admin/auth/user/add/", form)
    assert response.status_code == 200
    assert "This password is too short. It must contain at least 12 characters." in response.content.decode()
    assert not get_user_model().objects.filter(username="nurse.ute").exists()
    form.update(password1="ward3-night-shift", password2="ward3-night-shift")
    assert client.post("/admin/auth/user/add/", form).status_code == 302
    assert get_user_model().objects.filter(username="nurse.ute").exists()
