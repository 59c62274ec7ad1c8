"""Every console page as each demo role opens it, in real Chromium at 1440 and 390 px: no page scrolls sideways,
no page offers a write the role may not make (each form's target against the PAGE_ACCESS registries), and axe-core
finds no serious or critical accessibility violation (issue 23, "Done means").

axe-core comes from `make browser-assets` (.browser-assets/, pinned in the Makefile). Without it this test is
skipped, unless CONDOR_REQUIRE_BROWSER is set (CI), which makes it fail. Screenshots go to
screenshots/every-<role>-<width>-<page>.png (not in git), one per page content a role sees first at a width.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.urls import Resolver404, resolve

from catalog.core.access import may
from tests.conftest import ROOT
from tests.integration.browser import walk
from tests.integration.browser.conftest import SCREENSHOTS, fits_the_width, sign_in
from tests.integration.browser.walk import ACCESS, ROLES

pytestmark = pytest.mark.django_db(transaction=True)
demo_with_a_pending_request = walk.demo_with_a_pending_request  # the shared fixture, used by name below

AXE = ROOT / ".browser-assets" / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = ((1440, 900), (390, 844))
# (short name for reports and screenshots, url name whose access rule decides who may open it, path)
PAGES: tuple[tuple[str, str, str], ...] = (
    ("dashboard", "home", "/"),
    ("catalog", "catalog", "/catalog/"),
    ("tool", "tool", "/tools/condor/prescribeMedication/"),
    ("owners", "owners", "/owners/?q=get_clinical_notes"),
    ("teams", "teams", "/teams/"),
    ("team", "team", "/teams/clinical-meds/"),
    ("findings", "findings", "/findings/"),
    ("revisions", "revisions", "/revisions/"),
    ("revision", "revision", "/revisions/condor/1/"),
    ("mcp", "mcp-servers", "/mcp/"),
    ("mcp-server", "mcp-server", "/mcp/referrals/"),
    ("floors", "tier-floors", "/floors/"),
    ("rag", "rag:playground", "/rag/?q=prescribe+amoxicillin"),
    ("rag-quality", "rag:quality", "/rag/quality/"),
    ("usage-unknown", "usage:unknown", "/usage/unknown/"),
    ("cards", "cards:matrix", "/cards/?key=card.medication.title&lang=de"),
    ("cards-coverage", "cards:coverage", "/cards/coverage/"),
    ("tokens", "api-tokens", "/tokens/"),
    ("approvals", "approvals:queue", "/approvals/"),
    ("approvals-history", "approvals:history", "/approvals/history/"),
    ("approval", "approvals:detail", "/approvals/{request}/"),
)
AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({id: v.id, impact: v.impact, targets: v.nodes.slice(0, 5).map((n) => n.target.join(" "))}));
}"""


@pytest.fixture
def axe_script() -> str:
    if not AXE.exists():
        if os.environ.get("CONDOR_REQUIRE_BROWSER"):
            pytest.fail(f"CONDOR_REQUIRE_BROWSER is set but {AXE} is missing: run `make browser-assets`")
        pytest.skip("axe-core is not installed: `make browser-assets` (needs npm)")
    return str(AXE)


def pages_for(username: str) -> list[tuple[str, str]]:
    user = get_user_model().objects.get(username=username)
    return [(name, path) for name, url_name, path in PAGES if may(user, ACCESS[url_name][1])]


@contextmanager
def signed_in_tab(browser: Any, base: str, username: str, width: int, height: int, **options: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    tab = context.new_page()
    sign_in(tab, base, username)
    try:
        yield tab
    finally:
        context.close()


# Every write a page offers: POST forms and htmx posts (a form without an action posts to the page itself).
OFFERED = """() => [...document.querySelectorAll("form[method=post i], [hx-post]")]
  .map((e) => e.getAttribute("hx-post") || e.getAttribute("action") || location.pathname)"""


def forbidden_offers(user: Any, actions: list[str]) -> list[str]:
    """The offered writes whose access rule does not admit `user` (the sign-out and language forms have none)."""
    refused = []
    for action in sorted(set(actions)):
        try:
            name = resolve(urlsplit(action).path).view_name
        except Resolver404:
            refused.append(f"{action} (no such URL)")
            continue
        if name in ACCESS and not may(user, ACCESS[name][1]):
            refused.append(name)
    return refused


# What axe needs to see once per width: a page's main content (the CSRF token aside). Two roles who get the same
# page (most read-only pages) are checked once; a role that is offered a form is checked again. The header, which
# differs by role, is checked on each role's first page.
FINGERPRINT = """() => {
  const main = document.querySelector("main");
  return main ? main.outerHTML.replace(/name="csrfmiddlewaretoken" value="[^"]*"/g, "") : "";
}"""


def walk(
    browser: Any, base: str, username: str, size: tuple[int, int], pages: list[tuple[str, str]], seen: set[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Open each page (the Content-Security-Policy in force): its status, its width, the writes it offers, a
    screenshot. Returns the problems and the pages whose content axe has not seen yet at this width."""
    problems: list[str] = []
    unseen: list[tuple[str, str]] = []
    width = size[0]
    user = get_user_model().objects.get(username=username)
    with signed_in_tab(browser, base, username, *size) as tab:
        for name, path in pages:
            response = tab.goto(base + path)
            tab.wait_for_load_state()
            if response is None or response.status != 200:
                problems.append(f"{name} {path} as {username}: HTTP {response.status if response else '?'}")
                continue
            if not fits_the_width(tab):
                scroll = tab.evaluate("document.documentElement.scrollWidth")
                problems.append(f"{name} as {username} at {width} px: {scroll} px wide (scrolls sideways)")
            for action in forbidden_offers(user, tab.evaluate(OFFERED)):
                problems.append(f"{name} as {username} offers {action}, which {username} may not do")
            fingerprint = f"{width} {name} {tab.evaluate(FINGERPRINT)}"
            if fingerprint not in seen or not unseen:
                seen.add(fingerprint)
                unseen.append((name, path))
                # A screenshot of what no earlier role saw the same at this width (and of each role's first page,
                # for its header): the rest would be copies of one already taken.
                tab.screenshot(path=str(SCREENSHOTS / f"every-{username}-{width}-{name}.png"), full_page=True)
    return problems, unseen


def axe_pass(
    browser: Any, base: str, username: str, size: tuple[int, int], pages: list[tuple[str, str]], axe: str
) -> list[str]:
    """axe-core on each page. Injecting it is an inline script, which our CSP refuses: this pass alone bypasses it."""
    problems: list[str] = []
    with signed_in_tab(browser, base, username, *size, bypass_csp=True) as tab:
        for name, path in pages:
            tab.goto(base + path)
            tab.wait_for_load_state()
            tab.add_script_tag(path=axe)
            for v in tab.evaluate(AXE_RUN):
                problems.append(
                    f"axe {v['impact']} {v['id']} on {name} as {username} at {size[0]} px: {'; '.join(v['targets'])}"
                )
    return problems


def test_every_page_fits_offers_only_allowed_writes_and_passes_axe_for_every_role(
    live_server: Any, demo_with_a_pending_request: str, axe_script: str, browser: Any
) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    problems: list[str] = []
    seen: set[str] = set()
    for username in ROLES:
        pages = [(name, path.format(request=demo_with_a_pending_request)) for name, path in pages_for(username)]
        for size in WIDTHS:
            found, unseen = walk(browser, live_server.url, username, size, pages, seen)
            problems += found + axe_pass(browser, live_server.url, username, size, unseen, axe_script)
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)


def test_the_offer_check_names_a_write_the_role_may_not_make(make_user: Any) -> None:
    translator = make_user("tina", "translator")
    offered = ["/cards/save", "/cards/review", "/floors/new", "/language", "/logout/", "/nowhere/"]
    assert forbidden_offers(translator, offered) == ["cards:review", "tier-floor-add", "/nowhere/ (no such URL)"]
