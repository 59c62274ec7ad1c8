"""Production settings, as README "Running in production" sets them, in a process of their own.

Settings are read from the environment once, at start-up, so these tests start `manage.py` in a subprocess with
DEBUG=false rather than patching settings they would then only be guessing at: `check --deploy` is clean,
`collectstatic` + WhiteNoise serve hashed files, every page renders with the manifest storage, and console
pages and API answers carry the security headers and secure cookies.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def production_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(48),  # 64 characters
        CONDOR_AUDIT_KEY=secrets.token_urlsafe(48),  # the audit chain's key: `check --deploy` requires it
        ALLOWED_HOSTS="condor.example.org,testserver",
        DATABASE_URL=f"sqlite:///{tmp / 'prod.sqlite3'}",
        STATIC_ROOT=str(tmp / "static"),
        # Production runs Redis; `check` does not connect, so CI's server or a placeholder both do here.
        REDIS_URL=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        CONDOR_ACTIVE_PROFILE="",
    )
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_check_deploy_is_clean(tmp_path: Path) -> None:
    result = manage(production_env(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


def test_check_deploy_warns_when_lockouts_would_be_counted_per_process(tmp_path: Path) -> None:
    result = manage(production_env(tmp_path, REDIS_URL="", CACHE_URL=""), "check", "--deploy")
    assert "condor.W010" in result.stderr + result.stdout


def test_production_refuses_to_start_without_a_secret_key(tmp_path: Path) -> None:
    result = manage(production_env(tmp_path, SECRET_KEY=""), "check")
    assert result.returncode != 0 and "SECRET_KEY must be set when DEBUG is off" in result.stderr


# Runs inside the DEBUG=false process: requests through the whole middleware stack, answers as JSON.
PROBE = r"""
import json, re
from django.contrib.auth import get_user_model
from django.test import Client
from catalog.models import ApiToken

User = get_user_model()
User.objects.create_superuser("root", "root@example.org", "a long production password")
raw = ApiToken.generate()
ApiToken.objects.create(name="probe", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=["catalog:read"])

def seen(response):
    return {
        "status": response.status_code,
        "headers": dict(response.headers),
        "cookies": {
            k: {"secure": bool(m["secure"]), "httponly": bool(m["httponly"])} for k, m in response.cookies.items()
        },
        "body": response.content.decode("utf-8", "replace")[:20000] if not response.streaming else "",
    }

out = {}
anonymous = Client()
out["insecure"] = seen(anonymous.get("/login/"))
out["login"] = seen(anonymous.get("/login/", secure=True))
credentials = {"username": "root", "password": "a long production password"}
out["signed_in"] = seen(anonymous.post("/login/", credentials, secure=True))
people = Client()
people.force_login(User.objects.get(username="root"))
pages = ["/", "/catalog/", "/findings/", "/revisions/", "/teams/", "/owners/?q=x", "/approvals/", "/cards/"]
for path in [*pages, "/admin/", "/admin/catalog/tool/", "/api/v1/docs"]:
    out[path] = seen(people.get(path, secure=True))
stylesheet = re.search(r'href="(/static/condor/console\.[0-9a-f]{12}\.css)"', out["/"]["body"])
out["stylesheet"] = seen(people.get(stylesheet.group(1), secure=True)) if stylesheet else None
out["api"] = seen(Client().get("/api/v1/catalog/revisions", secure=True, headers={"Authorization": f"Bearer {raw}"}))
print("PROBE " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: Any) -> dict[str, str]:
    """The deploy steps of the README: collectstatic and migrate, on a database of its own."""
    tmp = tmp_path_factory.mktemp("production")
    env = production_env(tmp, REDIS_URL="", CACHE_URL="")  # no broker needed to render pages
    for step in (("collectstatic", "--no-input", "-v0"), ("migrate", "--no-input", "-v0")):
        result = manage(env, *step)
        assert result.returncode == 0, f"{step[0]}: {result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return env


@pytest.fixture(scope="module")
def production(deployed: dict[str, str]) -> dict[str, Any]:
    result = manage(deployed, "shell", "-c", PROBE)
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("PROBE "))
    return json.loads(line.removeprefix("PROBE "))


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip() and not line.startswith("#"))


def test_the_procfile_runs_web_worker_and_beat_as_separate_processes() -> None:
    processes = procfile()
    assert processes["web"].startswith("gunicorn condor_admin.wsgi ") and "gthread" in processes["web"]
    assert processes["worker"].startswith("celery -A condor_admin worker") and "--beat" not in processes["worker"]
    assert processes["beat"].startswith("celery -A condor_admin beat")


def test_the_procfiles_web_process_serves_pages_and_static_files(deployed: dict[str, str]) -> None:
    """gunicorn as the Procfile starts it, behind a proxy that terminated TLS (SECURE_PROXY_SSL_HEADER)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**deployed, "PORT": str(port), "WEB_CONCURRENCY": "1", "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto"}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"  # the virtualenv's gunicorn
    command = procfile()["web"].replace("0.0.0.0", "127.0.0.1")
    server = subprocess.Popen(
        ["bash", "-c", f"exec {command}"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:

        def get(path: str, **headers: str) -> Any:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}{path}", headers={"Host": "condor.example.org", **headers}
            )
            opener = urllib.request.build_opener(NoRedirect)
            try:
                return opener.open(request, timeout=10)
            except urllib.error.HTTPError as exc:
                return exc

        deadline = time.monotonic() + 60
        while True:
            try:
                plain = get("/login/")
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.3)
        assert plain.status == 301 and plain.headers["Location"] == "https://condor.example.org/login/"
        page = get("/login/", **{"X-Forwarded-Proto": "https"})
        html = page.read().decode()
        assert page.status == 200 and "Strict-Transport-Security" in page.headers
        stylesheet = re.search(r'href="(/static/condor/console\.[0-9a-f]{12}\.css)"', html)
        assert stylesheet, html[:2000]
        css = get(stylesheet.group(1), **{"X-Forwarded-Proto": "https", "Accept-Encoding": "gzip"})
        assert css.status == 200 and css.headers["Content-Encoding"] == "gzip"  # WhiteNoise's compressed copy
    finally:
        server.terminate()
        server.wait(timeout=30)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


PAGES = ["/", "/catalog/", "/findings/", "/revisions/", "/teams/", "/owners/?q=x", "/approvals/", "/cards/"]


def test_pages_render_with_collected_hashed_static_files(production: dict[str, Any]) -> None:
    for path in [*PAGES, "/admin/", "/admin/catalog/tool/", "/api/v1/docs"]:
        assert production[path]["status"] == 200, (path, production[path]["body"][:2000])
    assert "/static/django_htmx/htmx-2.min." in production["/"]["body"]  # hashed names from the manifest
    assert "/static/ninja/swagger-ui-bundle." in production["/api/v1/docs"]["body"]


def test_whitenoise_serves_the_hashed_files_cached_for_ever(production: dict[str, Any]) -> None:
    stylesheet = production["stylesheet"]
    assert stylesheet is not None and stylesheet["status"] == 200
    assert "immutable" in stylesheet["headers"]["Cache-Control"]


def test_plain_http_is_redirected_to_https(production: dict[str, Any]) -> None:
    assert production["insecure"]["status"] == 301
    assert production["insecure"]["headers"]["Location"] == "https://testserver/login/"


def expect_security_headers(headers: dict[str, str], *, page: bool = True) -> None:
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    policy = headers["Content-Security-Policy"]
    if page:
        assert "script-src 'self'" in policy and "style-src 'self'" in policy and "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy
    else:  # JSON for a service: nothing in it may load or run anything, nor be framed
        assert policy == "default-src 'none'; frame-ancestors 'none'"


def test_console_pages_carry_the_security_headers(production: dict[str, Any]) -> None:
    for path in ["/login/", *PAGES]:
        answer = production["login" if path == "/login/" else path]
        expect_security_headers(answer["headers"])


def test_api_answers_carry_the_security_headers(production: dict[str, Any]) -> None:
    assert production["api"]["status"] == 200
    assert production["api"]["headers"]["Content-Type"] == "application/json; charset=utf-8"
    expect_security_headers(production["api"]["headers"], page=False)


def test_only_the_api_docs_may_load_data_images(production: dict[str, Any]) -> None:
    assert "img-src 'self' data:" in production["/api/v1/docs"]["headers"]["Content-Security-Policy"]
    assert "data:" not in production["/"]["headers"]["Content-Security-Policy"]


def test_cookies_are_secure_and_the_session_is_out_of_scripts_reach(production: dict[str, Any]) -> None:
    assert production["login"]["cookies"]["csrftoken"]["secure"]
    session = production["signed_in"]["cookies"]["sessionid"]
    assert production["signed_in"]["status"] == 302
    assert session == {"secure": True, "httponly": True}


def test_every_environment_variable_is_documented() -> None:
    """README "Environment variables" names every variable settings.py reads, and nothing it does not read."""
    source = (ROOT / "condor_admin/settings.py").read_text()
    read = set(re.findall(r'(?:os\.environ\.get|env_bool)\("([A-Z0-9_]+)"', source))
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### Environment variables") :]
    table = table[: table.index("\n## ")]
    first_cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    documented = {name for cell in first_cells for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    procfile_only = {"PORT", "WEB_CONCURRENCY", "GUNICORN_THREADS"}
    assert read - documented == set(), "document these in README.md, Running in production"
    assert documented - read - procfile_only == set(), "README documents variables settings.py does not read"
