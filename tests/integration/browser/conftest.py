"""Real Chromium (Debian's package) driven by Playwright against pytest-django's live server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

CHROMIUM = os.environ.get("CONDOR_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = ROOT / "screenshots"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM:
        if os.environ.get("CONDOR_REQUIRE_BROWSER"):
            pytest.fail("CONDOR_REQUIRE_BROWSER is set but no chromium executable was found")
        pytest.skip("no chromium on this machine (apt-get install chromium); CI installs it")
    # Playwright's sync API runs an event loop in this thread; the ORM calls made by fixtures here are
    # synchronous and safe, so let Django allow them.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture
def screenshot(page: Any) -> Any:
    SCREENSHOTS.mkdir(exist_ok=True)

    def take(name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def sign_in(page: Any, base: str, username: str, then: str = "/") -> None:
    """Sign in through the login form as a demo user (password `condor-demo`), landing on `then`."""
    page.goto(f"{base}/login/?next={then}")
    page.fill("#id_username", username)
    page.fill("#id_password", "condor-demo")
    page.click("button[type=submit]")
    page.wait_for_load_state()


def fits_the_width(page: Any) -> bool:
    """Whether the page scrolls sideways at the viewport's width (it must not, on a phone as on a desktop)."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))
