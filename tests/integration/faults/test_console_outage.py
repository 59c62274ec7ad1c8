"""The console's pages while PostgreSQL is stopped: a styled 503 with Retry-After, never a 500, and the same pages
again as soon as the server is back.

The app runs as production runs it (gunicorn, DEBUG off, persistent connections) on a throw-away PostgreSQL
cluster, which we stop and start. A person is signed in before the outage, so the session, the user and the page
each need the database. test_postgres_restart.py does the same for the API under load;
tests/test_database_unavailable.py checks the pages on either database without a server.
"""

from __future__ import annotations

import http.client
import re
import secrets
import subprocess
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings

from .conftest import PG_BINS, PY, ROOT, PostgresCluster, free_port, manage, service_env, wait_for
from .test_postgres_restart import start_gunicorn

pytestmark = [
    pytest.mark.skipif(
        "postgresql" not in settings.DATABASES["default"]["ENGINE"],
        reason="fault tests need a real PostgreSQL: set DATABASE_URL=postgres://… (CI's second pass does)",
    ),
    pytest.mark.skipif(not PG_BINS, reason="this fault test starts its own PostgreSQL cluster: install postgresql"),
]

PAGES = ("/", "/approvals/", "/catalog/", "/findings/")
PASSWORD = secrets.token_urlsafe(12)
SETUP = f"""
from django.contrib.auth.models import User
User.objects.create_superuser("oncall", password="{PASSWORD}")
"""


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: str


class Browser:
    """Plain HTTP with a cookie jar, one connection per request (gunicorn's sync workers close each one)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        headers = {**(headers or {}), "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body, headers)
            response = conn.getresponse()
            answer = Answer(response.status, response.headers, response.read().decode())
        finally:
            conn.close()
        for header in answer.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return answer

    def sign_in_form(self) -> dict[str, str]:
        page = self.request("GET", "/login/")
        assert page.status == 200, page.body[:500]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.body)
        assert token is not None
        return {"csrfmiddlewaretoken": token.group(1), "username": "oncall", "password": PASSWORD}


def deploy(cluster: PostgresCluster, workdir: Path) -> dict[str, str]:
    """Migrate, collect the static files (side by side) and create the person who signs in."""
    env = service_env(
        DATABASE_URL=cluster.url(),
        REDIS_URL="",
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="false",  # plain HTTP on loopback: TLS would end in front of gunicorn
        STATIC_ROOT=str(workdir / "static"),
        CONN_MAX_AGE="60",
    )
    collect = subprocess.Popen(
        [PY, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=ROOT, env=env, stderr=subprocess.PIPE
    )
    manage(env, "migrate", "--no-input", "-v0")
    manage(env, "shell", "-c", SETUP)
    _, err = collect.communicate(timeout=300)
    assert collect.returncode == 0, err[-3000:]
    return env


def test_console_pages_answer_503_with_retry_after_while_postgres_is_stopped(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    env = deploy(postgres_cluster, tmp_path)
    port = free_port()
    log = tmp_path / "gunicorn.log"
    server = start_gunicorn(env, port, log)
    try:
        person = Browser(port)
        signed_in = person.request("POST", "/login/", person.sign_in_form())
        assert signed_in.status == 302, signed_in.body[:500]
        assert [person.request("GET", page).status for page in PAGES] == [200] * len(PAGES)
        form = Browser(port)
        sign_in = form.sign_in_form()

        postgres_cluster.stop("fast")
        during = {page: person.request("GET", page) for page in PAGES}
        during["POST /login/"] = form.request("POST", "/login/", sign_in)
        login_page = Browser(port).request("GET", "/login/")
        htmx = person.request("GET", "/approvals/", headers={"HX-Request": "true"})
        postgres_cluster.start()

        back = wait_for(lambda: person.request("GET", "/").status == 200, timeout=10)
        after = [person.request("GET", page).status for page in PAGES]
    finally:
        server.terminate()
        server.wait(timeout=30)

    for what, answer in during.items():
        assert answer.status == 503, (what, answer.status, answer.body[:500])
        assert answer.headers["Retry-After"] == "5", what
        assert "The console is back in a moment" in answer.body and "/static/condor/console" in answer.body, what
    assert login_page.status in (200, 503), login_page.body[:500]  # the empty form needs no database: never a 500
    assert htmx.status == 503 and htmx.headers["Retry-After"] == "5"
    assert htmx.body.startswith("The console's database is not reachable right now")
    assert back < 5 and after == [200] * len(PAGES)
    # Django logs each answer >= 500 by its reason: "Service Unavailable: /", never "Internal Server Error: /".
    served = log.read_text()
    assert "Service Unavailable" in served and "Internal Server Error" not in served, served[-3000:]
