"""Sign-in throttling: five failed passwords for one username from one address lock that pair out for 15 minutes,
in the console's and the admin's sign-in forms alike, with a message that says so (never a 500)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from catalog.core import signin
from catalog.models import AuditEvent

LOCKED = "Too many failed sign-in attempts"


@pytest.fixture(autouse=True)
def _own_cache(request: Any, settings: Any) -> None:
    """A fresh in-memory cache per test (the Redis test below keeps the configured one), and empty counters of
    this process's own (what the throttle counts in while the cache is down)."""
    if request.function is not test_the_lockout_lives_in_redis_for_every_process:
        settings.CACHES = {
            "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": uuid.uuid4().hex}
        }
    signin.local_counters().clear()


@pytest.fixture
def olga(make_user: Callable[..., Any]) -> Any:
    return make_user("olga", "safety-officer")  # password pw-olga


def sign_in(client: Client, username: str, password: str, url: str = "/login/", address: str = "10.0.0.1") -> Any:
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def fail(client: Client, username: str, times: int, **kwargs: Any) -> Any:
    response = None
    for _ in range(times):
        response = sign_in(client, username, "wrong", **kwargs)
    return response


def test_five_failures_lock_the_username_at_that_address(client: Client, olga: Any) -> None:
    fourth = fail(client, "olga", 4)
    assert fourth.status_code == 200 and LOCKED not in fourth.content.decode()
    fifth = sign_in(client, "olga", "wrong")
    assert fifth.status_code == 200
    assert f"{LOCKED} for this username from your address. Sign-in is locked; try again in 15 minutes." in (
        fifth.content.decode()
    )
    event = AuditEvent.objects.get(action="signin.locked")
    assert event.object_id == "olga" and event.after == {"address": "10.0.0.1", "failures": 5, "lockoutSeconds": 900}


def test_the_right_password_during_the_lockout_is_still_refused(client: Client, olga: Any) -> None:
    fail(client, "olga", 5)
    response = sign_in(client, "olga", "pw-olga")
    assert response.status_code == 200 and LOCKED in response.content.decode()
    assert not signed_in(client)
    assert AuditEvent.objects.filter(action="signin.locked").count() == 1  # locked once, not once per attempt


def test_the_lockout_expires(client: Client, olga: Any, monkeypatch: Any) -> None:
    fail(client, "olga", 5)
    start = signin.now()
    monkeypatch.setattr(signin, "now", lambda: start + 14 * 60)
    assert LOCKED in sign_in(client, "olga", "pw-olga").content.decode()
    assert "try again in 1 minute." in sign_in(client, "olga", "pw-olga").content.decode()
    monkeypatch.setattr(signin, "now", lambda: start + 15 * 60 + 1)
    response = sign_in(client, "olga", "pw-olga")
    assert response.status_code == 302 and signed_in(client)


def test_other_users_and_other_addresses_are_unaffected(
    client: Client, olga: Any, make_user: Callable[..., Any]
) -> None:
    make_user("omar", "on-call")
    fail(client, "olga", 5)
    assert sign_in(Client(), "omar", "pw-omar").status_code == 302  # another user, same address
    assert sign_in(Client(), "olga", "pw-olga", address="10.0.0.2").status_code == 302  # olga at her own desk


def test_failures_below_the_limit_do_not_lock(client: Client, olga: Any) -> None:
    fail(client, "olga", 4)
    assert sign_in(client, "olga", "pw-olga").status_code == 302


def test_the_admin_sign_in_is_throttled_by_the_same_count(client: Client, make_user: Callable[..., Any]) -> None:
    make_user("root", is_staff=True, is_superuser=True)
    fail(client, "root", 3)  # at the console
    response = fail(client, "root", 2, url="/admin/login/")
    assert response.status_code == 200 and LOCKED in response.content.decode()
    response = sign_in(client, "root", "pw-root", url="/admin/login/")
    assert LOCKED in response.content.decode() and not signed_in(client)


def test_the_message_is_german_for_a_german_browser(client: Client, olga: Any) -> None:
    fail(client, "olga", 5)
    response = client.post(
        "/login/", {"username": "olga", "password": "pw-olga"}, REMOTE_ADDR="10.0.0.1", HTTP_ACCEPT_LANGUAGE="de"
    )
    assert "Zu viele fehlgeschlagene Anmeldeversuche" in response.content.decode()


def test_the_client_address_behind_a_proxy_is_the_one_the_proxy_appended(rf: Any, settings: Any) -> None:
    request = rf.get("/", REMOTE_ADDR="10.9.9.9", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.7")
    assert signin.client_address(request) == "10.9.9.9"  # no proxy configured: the header is the client's text
    settings.CONDOR_CLIENT_IP_HEADER = "X-Forwarded-For"
    assert signin.client_address(request) == "192.0.2.7"


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs a real Redis: set REDIS_URL (CI does)")
def test_the_lockout_lives_in_redis_for_every_process(make_user: Callable[..., Any]) -> None:
    from django.core.cache import caches

    assert type(caches["default"]).__name__ == "RedisCache"
    name = f"redis-{uuid.uuid4().hex[:8]}"  # the Redis database outlives the test: a name of its own
    make_user(name)
    fail(Client(), name, 5)
    assert signin.signin_lockout_remaining(username=name, address="10.0.0.1") > 890
    response = sign_in(Client(), name, f"pw-{name}")  # a new session: the count is not in the session
    assert LOCKED in response.content.decode()


# --- a lockout for a username nobody has ------------------------------------------------------------------------


def test_a_lockout_for_a_username_nobody_has_reads_the_same_but_writes_no_audit_event(
    client: Client, olga: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A guesser cycling through made-up usernames must not be able to write the audit log at will."""
    for n in range(4):
        response = fail(client, f"nobody-{n}", 5)
        assert response.status_code == 200
        assert f"{LOCKED} for this username from your address. Sign-in is locked; try again in 15 minutes." in (
            response.content.decode()
        )  # word for word what a real account's lockout says: it tells nobody which usernames exist
    assert not AuditEvent.objects.filter(action="signin.locked").exists()
    assert "failed passwords for unknown username 'nobody-3' from 10.0.0.1" in caplog.text  # still logged
    fail(client, "OLGA", 5)  # a real account, spelt in capitals: counted with olga and audited
    assert list(AuditEvent.objects.filter(action="signin.locked").values_list("object_id", flat=True)) == ["OLGA"]


# --- the cache (Redis) down -------------------------------------------------------------------------------------


def test_with_the_cache_down_the_right_password_signs_in_and_the_console_opens(
    cache_down: None, client: Client, olga: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A clinician must be able to sign in to decide an approval while Redis is away."""
    response = sign_in(client, "olga", "pw-olga")
    assert response.status_code == 302 and signed_in(client)
    assert client.get("/catalog/").status_code == 200
    assert "sign-in throttle: the cache is unavailable" in caplog.text


def test_with_the_cache_down_failures_are_still_counted_and_lock(cache_down: None, client: Client, olga: Any) -> None:
    assert LOCKED not in fail(client, "olga", 4).content.decode()
    fifth = sign_in(client, "olga", "wrong")
    assert fifth.status_code == 200 and LOCKED in fifth.content.decode()
    refused = sign_in(client, "olga", "pw-olga")
    assert refused.status_code == 200 and LOCKED in refused.content.decode() and not signed_in(client)
    assert AuditEvent.objects.filter(action="signin.locked", object_id="olga").count() == 1
    assert sign_in(Client(), "olga", "pw-olga", address="10.0.0.2").status_code == 302  # olga at her own desk


def test_a_lockout_taken_while_the_cache_was_down_holds_after_it_is_back(
    cache_down: None, client: Client, olga: Any, settings: Any
) -> None:
    fail(client, "olga", 5)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "back"}}
    response = sign_in(client, "olga", "pw-olga")
    assert LOCKED in response.content.decode() and not signed_in(client)
