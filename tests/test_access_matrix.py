"""Every console URL × every role → the expected status, generated from the URL conf.

A page added without an entry in an app's PAGE_ACCESS registry fails `test_every_page_has_an_access_rule`.
"""

from __future__ import annotations

import importlib
import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from catalog.core.access import SIGNED_IN
from catalog.models import ApiToken, TierFloor, Tool, Waiver
from catalog.services.imports import catalog_import
from tests.conftest import forget_caches

SKIPPED_NAMESPACES = {"admin", "api"}
SKIPPED_NAMES = {"login", "logout"}
ROLES: dict[str, tuple[str, ...]] = {
    "safety-officer": ("safety-officer",),
    "on-call": ("on-call",),
    "approver": ("approver", "approver:medication"),
    "translator": ("translator",),
    "translator-reviewer": ("translator", "translator-reviewer"),
    "catalog-admin": ("catalog-admin",),
    "no-role": (),
}


def access_registry() -> dict[str, tuple[str, Any]]:
    registry: dict[str, tuple[str, Any]] = {}
    for config in apps.get_app_configs():
        # Where each app keeps its page access rules: catalog's with its platform code (catalog.core).
        for name in (f"{config.name}.access", f"{config.name}.core.access"):
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError:
                continue
            registry.update(getattr(module, "PAGE_ACCESS", {}))
    return registry


def console_urls() -> dict[str, URLPattern]:
    found: dict[str, URLPattern] = {}

    def walk(patterns: list[Any], namespace: str | None) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                if p.namespace in SKIPPED_NAMESPACES:
                    continue
                ns = p.namespace or namespace
                walk(
                    p.url_patterns,
                    ns if p.namespace is None else (f"{namespace}:{p.namespace}" if namespace else p.namespace),
                )
            elif isinstance(p, URLPattern) and p.name and p.name not in SKIPPED_NAMES:
                found[f"{namespace}:{p.name}" if namespace else p.name] = p

    walk(get_resolver().url_patterns, None)
    return found


def test_every_page_has_an_access_rule() -> None:
    assert set(console_urls()) == set(access_registry())


@pytest.fixture(scope="module")
def world_once(demo_once: None, django_db_blocker: Any) -> dict[str, Any]:
    """The demo with one of everything a URL can name, built once for the module (tests/conftest.py,
    `module_transaction`: each test's writes are rolled back to it)."""
    with django_db_blocker.unblock():
        return _build_world()


@pytest.fixture
def world(world_once: dict[str, Any], db: Any) -> dict[str, Any]:
    forget_caches()
    return world_once


def _build_world() -> dict[str, Any]:
    officer = get_user_model().objects.create_user(username="olga", password="pw-olga")
    officer.groups.set([Group.objects.get_or_create(name="safety-officer")[0]])
    tool = Tool.objects.get(declared_id="recordPayment")
    waiver = Waiver.objects.create(
        tool=tool,
        rule="retry-declared-on-mutating",
        justification="test",
        expires_at=timezone.now() + timedelta(days=5),
        granted_by=officer,
    )
    from approvals.services import approval_evaluate

    approval = approval_evaluate(
        tool_name="prescribeMedication",
        profile="clinical-production",
        dispatch_mode="supervised",
        run_id="access-matrix",
        requested_by="dr.house",
        patient_ref="pat-1",
        args={},
        idempotency_key="access-matrix",
        via="test",
    ).request
    # An MCP server under the sample slug the team pages use too ("billing").
    mcp = {"id": "billing", "name": "billing-mcp", "version": "1", "protocolVersion": "2025-06-18"}
    tools = [{"name": "lookup_invoice", "description": "Find an invoice.", "inputSchema": {"type": "object"}}]
    catalog_import(raw=json.dumps({"format": "mcp-tools/v1", "server": mcp, "tools": tools}).encode(), via="test")
    return {
        "request_id": approval.pk,
        "system": "condor",
        "number": 1,
        "declared_id": "recordPayment",
        "slug": "billing",
        "fmt": "csv",
        "profile": "clinical-production",
        "pk": waiver.pk,
        "token_id": ApiToken.objects.create(name="runtime", prefix="cnd_matrix", token_hash="0" * 64).pk,
        "floor_id": TierFloor.objects.create(policy_domain="access-matrix", min_tier="high", reason="test").pk,
    }


def url_for(name: str, pattern: URLPattern, samples: dict[str, Any]) -> str:
    kwargs = {k: samples[k] for k in pattern.pattern.converters}
    return reverse(name, kwargs=kwargs)


@pytest.mark.parametrize("role", sorted(ROLES))
def test_each_role_gets_what_its_rule_says(world: dict[str, Any], make_user: Any, role: str) -> None:
    client = Client()
    client.force_login(make_user(f"user-{role}", *ROLES[role]))
    registry = access_registry()
    problems = []
    for name, pattern in console_urls().items():
        method, allowed = registry[name]
        url = url_for(name, pattern, world)
        permitted = allowed == SIGNED_IN or bool(set(ROLES[role]) & set(allowed))
        response = client.get(url) if method == "GET" else client.post(url, {})
        if permitted:
            ok = response.status_code in ((200,) if method == "GET" else (200, 302, 400))
        else:
            ok = response.status_code == 403
        if not ok:
            problems.append((name, method, response.status_code, "permitted" if permitted else "refused"))
    assert problems == []


def test_anonymous_visitors_are_sent_to_sign_in(world: dict[str, Any]) -> None:
    client = Client()
    for name, pattern in console_urls().items():
        method, _ = access_registry()[name]
        url = url_for(name, pattern, world)
        response = client.get(url) if method == "GET" else client.post(url, {})
        assert response.status_code == 302 and response["Location"].startswith("/login/"), name


# Sample values for the admin's URL parameters (RoutePattern converters and RegexPattern groups alike).
ADMIN_SAMPLES = {"app_label": "catalog", "url": "no-such-page/"}


def admin_paths() -> list[str]:
    """Every URL pattern under /admin/, named or not, as a concrete path (the sign-in page and sign-out aside)."""
    admin_resolver = next(
        p for p in get_resolver().url_patterns if isinstance(p, URLResolver) and p.namespace == "admin"
    )
    found: list[str] = []

    def concrete(pattern: Any) -> str:
        text = str(pattern)
        text = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: ADMIN_SAMPLES.get(m.group(1), "1"), text)  # regex groups
        text = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: ADMIN_SAMPLES.get(m.group(1), "1"), text)  # path converters
        return text.lstrip("^").rstrip("$")

    def walk(patterns: list[Any], prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + concrete(p.pattern))
            elif p.name not in {"login", "logout"}:
                found.append(prefix + concrete(p.pattern))

    walk(admin_resolver.url_patterns, "/" + concrete(admin_resolver.pattern))
    return found


def refused_to_strangers(response: Any) -> bool:
    if response.status_code in (401, 403):
        return True
    location = response.get("Location", "")
    return response.status_code == 302 and location.startswith(("/login/", "/admin/login/"))


def test_an_anonymous_get_never_reaches_a_console_or_admin_page(world: dict[str, Any]) -> None:
    """GET, whatever method the page answers. A POST-only action may answer its bare 405 before asking who is
    there (require_POST runs first there): that shows no data, only that the address takes POSTs."""
    client = Client()
    registry = access_registry()
    post_only = {url_for(n, p, world) for n, p in console_urls().items() if registry[n][0] == "POST"}
    paths = [url_for(name, pattern, world) for name, pattern in console_urls().items()] + admin_paths()
    assert len(paths) > 100  # the admin's model pages are walked too
    reached = []
    for path in paths:
        response = client.get(path)
        if not (refused_to_strangers(response) or (path in post_only and response.status_code == 405)):
            reached.append((path, response.status_code))
    assert reached == []


def test_every_console_url_pattern_has_a_name() -> None:
    """The walks above go by name: an unnamed console pattern would escape them."""
    unnamed = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                if p.namespace not in SKIPPED_NAMESPACES:
                    walk(p.url_patterns, prefix + str(p.pattern))
            elif not p.name:
                unnamed.append(prefix + str(p.pattern))

    walk(get_resolver().url_patterns, "/")
    assert unnamed == []
