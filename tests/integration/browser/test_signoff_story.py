"""The governance story in a real browser, on the demo data: condor r2 lowers signDocument from tier high to low
and rewrites recordClinicalNote's description. The importer cannot sign it off; one safety officer's approval is
not enough (the runtime still suspends and is served the old text); the second one's puts it in effect.

Screenshots of the revision page at 1440 and 390 px, in English and German: screenshots/signoff-*.png."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from catalog.models import CatalogRevision, TierFloor
from tests.approvals.conftest import evaluate_body
from tests.integration.browser.conftest import SCREENSHOTS, sign_in

pytestmark = pytest.mark.django_db(transaction=True)

REVISION = "/revisions/condor/2/"
NOTE_PROMPT = "dictate and save a clinical note for this visit"
_keys = itertools.count(1)


@pytest.fixture
def demo_loaded(demo_committed: None) -> None:
    # The seed's signed-document floor (the migration's, part of demo_committed) makes r2 add its finding, as in
    # `make run`.
    assert TierFloor.objects.filter(pattern="*sign*document*").exists()


@pytest.fixture
def tab(browser: Any) -> Iterator[Callable[..., Any]]:
    """A fresh browser context per person (its own session), at a width and in a language."""
    contexts: list[Any] = []

    def open_tab(width: int = 1440, locale: str = "en-GB") -> Any:
        context = browser.new_context(viewport={"width": width, "height": 900}, locale=locale)
        contexts.append(context)
        return context.new_page()

    yield open_tab
    for context in contexts:
        context.close()


def shoot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# The elements sticking out past the right edge of the window, innermost last (to say what overflows).
WIDER = """[...document.querySelectorAll('main *')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .slice(-3).map(e => e.tagName + '.' + e.className + ' ' + (e.textContent || '').trim().slice(0, 40))"""


def no_sideways_scroll(page: Any) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow} px: {page.evaluate(WIDER)}"


def evaluate_sign_document(page: Any, base: str, token: str) -> dict[str, Any]:
    body = evaluate_body(
        tool="signDocument",
        profile="clinical-production",
        dispatchMode="operator",
        args={"documentId": "doc-1"},
        idempotencyKey=f"story-{next(_keys)}",
    )
    answer = page.request.post(f"{base}/api/v1/approvals/evaluate", data=body, headers=_bearer(token))
    assert answer.status in (200, 201), answer.text()
    result: dict[str, Any] = answer.json()
    return result


def served_note(page: Any, base: str, token: str) -> str:
    """recordClinicalNote's ragDescription as resolve serves it to the clinical profile."""
    body = {"prompt": NOTE_PROMPT, "profile": "clinical-production", "system": "condor"}
    answer = page.request.post(f"{base}/api/v1/rag/resolve", data=body, headers=_bearer(token))
    assert answer.status == 200, answer.text()
    text: str = answer.json()["ragDescriptions"]["record.clinical.note"]
    return text


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def approve(page: Any, comment: str) -> None:
    page.fill("#id_comment", comment)
    page.click("button[value=approved]")
    page.wait_for_load_state()


def test_two_safety_officers_sign_off_what_the_importer_cannot(
    live_server: Any, demo_loaded: None, tab: Callable[..., Any], make_token: Any
) -> None:
    base = live_server.url
    runtime = make_token("story-runtime", scopes=("approvals",))
    rag = make_token("story-rag", scopes=("rag",))

    importer = tab()
    sign_in(importer, base, "catalog-admin", then=REVISION)
    assert importer.locator("form.decision").count() == 0
    assert "an importer cannot sign off their own import" in importer.locator("main").inner_text()

    safety = tab()
    sign_in(safety, base, "safety", then="/revisions/")
    safety.click("text=condor r2")
    safety.wait_for_url(f"**{REVISION}")
    assert safety.locator(".badge.weakening").count() >= 4
    changes = safety.locator("article.change", has_text="recordClinicalNote")
    assert ", summarises" in changes.locator("pre.worddiff ins").all_inner_texts()
    preview = safety.locator("section[aria-labelledby=effect-h]")
    assert "what sign-off would change" in preview.inner_text().lower()
    sign_document = preview.locator("article.awaiting", has_text="signDocument")
    assert sign_document.locator("del").inner_text() == "high" and sign_document.locator("ins").inner_text() == "low"
    # ...declared high → low, but its floors keep serving it high: the page says what sign-off changes for a runtime.
    served = sign_document.locator(".served-tier").inner_text()
    assert "high before and after sign-off" in served and "held by" in served, served
    assert preview.locator("article.awaiting", has_text="recordClinicalNote").count() == 1
    findings = safety.locator("section[aria-labelledby=findings-h]")
    assert findings.locator("li", has_text="hitl-tier-below-floor").locator("a", has_text="signDocument").count() == 1
    # The decision comes after the diff.
    order = safety.evaluate(
        "[...document.querySelectorAll('pre.worddiff, form.decision')].map(e => e.tagName).join(',')"
    )
    assert order.endswith("FORM") and order.count("FORM") == 1
    old_note = served_note(safety, base, rag)

    approve(safety, "Read the diff: the tier drop is deliberate; the text is broader but still a clinical note.")
    progress = safety.locator("section[aria-labelledby=signoff-h] .progress").inner_text()
    assert "1 of 2 sign-offs" in progress and "safety" in progress and "waits for 1 more" in progress
    assert safety.locator("h1 .badge").inner_text() == "pending review"
    assert safety.locator("button[value=approved]").count() == 0  # safety approved already
    assert "You approved this revision already" in safety.locator("form.decision").inner_text()

    held = evaluate_sign_document(safety, base, runtime)
    assert held["decision"] == "suspend", held  # one sign-off is not enough: tier high still in effect
    assert served_note(safety, base, rag) == old_note  # and the old text is still served

    second = tab()
    sign_in(second, base, "safety-two", then=REVISION)
    approve(second, "Second sign-off: agreed with the first reviewer.")
    assert second.locator("h1 .badge").inner_text() == "approved"
    assert "2 of 2 sign-offs" in second.locator("section[aria-labelledby=signoff-h]").inner_text()
    assert second.locator("form.decision").count() == 0
    assert CatalogRevision.objects.get(system="condor", number=2).review_state == "approved"

    second.goto(f"{base}/tools/condor/signDocument/")
    assert second.locator("#in-effect-h").count() == 0  # no longer awaiting sign-off
    new_note = served_note(second, base, rag)
    assert new_note != old_note and new_note.startswith("USE WHEN: the clinician dictates, summarises")


@pytest.mark.parametrize(("locale", "language"), [("en-GB", "en"), ("de-DE", "de")])
def test_the_revision_page_reads_at_desktop_and_phone_widths(
    live_server: Any, demo_loaded: None, tab: Callable[..., Any], locale: str, language: str
) -> None:
    for width in (1440, 390):
        page = tab(width=width, locale=locale)
        sign_in(page, live_server.url, "safety", then=REVISION)
        assert page.locator("html").get_attribute("lang") == language
        assert page.locator("pre.worddiff").count() >= 2
        shoot(page, f"signoff-revision-{language}-{width}")
        no_sideways_scroll(page)
        if width == 390:
            page.goto(f"{live_server.url}/revisions/")
            shoot(page, f"signoff-revisions-{language}-{width}")
            no_sideways_scroll(page)
            page.goto(f"{live_server.url}/tools/condor/signDocument/")
            assert page.locator("#in-effect-h").count() == 1
            shoot(page, f"signoff-tool-{language}-{width}")
            no_sideways_scroll(page)
