"""The German walk (issue 23): each demo role switches the console to German and opens every page it may open, in
real Chromium; no page may show an English-only UI string.

What counts as English-only: every msgid of locale/de/LC_MESSAGES/django.po whose German differs from it and that
has at least two words and eight letters (a msgid with placeholders: its longest literal part, if that qualifies;
an untranslated msgid counts too: a German page would show it in English), plus the state words
(catalog.models.labels, approvals.labels). A phrase that the German catalog itself keeps (`USE WHEN`, names of
declared fields) is not English-only. Data is not UI: tool ids, declared texts, code and anything marked with
another language (`lang="en"`, `code`, `pre`, `.mono`, `kbd`, `samp`) are left out of the text read, and so is what
people wrote (a tier floor's reason, shown on its own and quoted in a finding: the migration seeds English ones, as
`make run` has them). Screenshots go
to screenshots/german-<role>-<page>.png (not in git).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pytest
from babel.messages.pofile import read_po
from django.contrib.auth import get_user_model

from approvals.labels import STATE_LABELS as APPROVAL_STATE_LABELS
from catalog.core.access import may
from catalog.models import TierFloor
from catalog.models.labels import STATE_LABELS
from tests.conftest import ROOT
from tests.integration.browser import walk
from tests.integration.browser.conftest import SCREENSHOTS, sign_in
from tests.integration.browser.walk import ACCESS, ROLES

pytestmark = pytest.mark.django_db(transaction=True)
demo_with_a_pending_request = walk.demo_with_a_pending_request  # the shared fixture, used by name below

RAG_QUERY = "prompt=Blutdruck+eintragen&profile=clinical-production&top_k=2&why_not=createInvoiceDraft"
# (short name for the report, url name whose access rule decides who may open it, path)
PAGES: tuple[tuple[str, str, str], ...] = (
    ("dashboard", "home", "/"),
    ("catalog", "catalog", "/catalog/"),
    ("tool", "tool", "/tools/condor/prescribeMedication/"),
    ("tool-with-findings", "tool", "/tools/condor/attachDocumentToChart/"),
    ("owners", "owners", "/owners/?q=get_clinical_notes"),
    ("teams", "teams", "/teams/"),
    ("team", "team", "/teams/clinical-meds/"),
    ("findings", "findings", "/findings/"),
    ("revisions", "revisions", "/revisions/"),
    ("revision", "revision", "/revisions/condor/1/"),
    ("mcp", "mcp-servers", "/mcp/"),
    ("mcp-server", "mcp-server", "/mcp/referrals/"),
    ("floors", "tier-floors", "/floors/"),
    ("rag", "rag:playground", f"/rag/?{RAG_QUERY}"),
    ("rag-why-not-plane", "rag:playground", f"/rag/?{RAG_QUERY.replace('createInvoiceDraft', 'resolveReferent')}"),
    ("rag-quality", "rag:quality", "/rag/quality/"),
    ("usage-unknown", "usage:unknown", "/usage/unknown/"),
    ("cards", "cards:matrix", "/cards/?key=card.medication.title&lang=de"),
    ("cards-coverage", "cards:coverage", "/cards/coverage/"),
    ("tokens", "api-tokens", "/tokens/"),
    ("approvals", "approvals:queue", "/approvals/"),
    ("approvals-history", "approvals:history", "/approvals/history/"),
    ("approval", "approvals:detail", "/approvals/{request}/"),
)

# The page's visible text without what is data or code (see the module docstring).
VISIBLE_UI_TEXT = """() => {
  const copy = document.body.cloneNode(true);
  copy.querySelectorAll('code, pre, kbd, samp, .mono, [lang]:not([lang^="de"]), script, style, template')
    .forEach((e) => e.remove());
  document.body.appendChild(copy);
  copy.hidden = false;
  const text = copy.innerText;
  copy.remove();
  return text;
}"""
_PLACEHOLDER = re.compile(r"%\(\w+\)[sdrf]|%[sd]|\{\{[^}]*\}\}|<[^>]+>")


def _qualifies(text: str) -> bool:
    return len(text.split()) >= 2 and sum(c.isalpha() for c in text) >= 8


def english_only_phrases() -> list[str]:
    """The English-only UI strings: the catalog's qualifying msgids (literal parts) and the state words."""
    with open(ROOT / "locale/de/LC_MESSAGES/django.po", "rb") as f:
        catalog = read_po(f, locale="de")
    german: list[str] = []
    english: set[str] = set()
    for m in catalog:
        if not m.id:
            continue
        ids = [m.id] if isinstance(m.id, str) else list(m.id)
        strings = [m.string] if isinstance(m.string, str) else [s for s in m.string if s]
        german += strings
        for msgid in ids:
            if msgid in strings:
                continue  # the same in German (`Tool-RAG`); an untranslated one (no msgstr) is English-only
            parts = [p.strip(" .,:;()") for p in _PLACEHOLDER.split(msgid)]
            longest = max(parts, key=len)
            if _qualifies(longest):
                english.add(longest)
    for labels in (STATE_LABELS, APPROVAL_STATE_LABELS):
        english |= {str(label) for label in labels.values()} | set(labels)
    kept_in_german = _PLACEHOLDER.sub(" ", " \n ".join(german))
    return sorted(p for p in english if not _contains(kept_in_german, p))


def _contains(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text) is not None


def switch_to_german(tab: Any) -> None:
    """The language switch in the header, as a person uses it (it submits on change)."""
    with tab.expect_navigation():
        tab.select_option("#language-switch", "de")
    assert tab.locator("html").get_attribute("lang") == "de"


def test_the_english_only_list_holds_what_a_german_page_must_not_show() -> None:
    phrases = english_only_phrases()
    assert {"pending review", "changes requested", "approved", "error", "warning"} <= set(phrases)
    assert "Who owns this tool?" in phrases and "Dashboard" not in phrases  # one word: too short to tell
    assert not any(p.startswith("%(") for p in phrases)


def test_every_page_reads_in_german_for_every_role(
    live_server: Any, demo_with_a_pending_request: str, browser: Any
) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    phrases = english_only_phrases()
    people_wrote = sorted({r.strip() for r in TierFloor.objects.values_list("reason", flat=True) if r.strip()})
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    roles_of: dict[tuple[str, str], list[str]] = defaultdict(list)
    for username in ROLES:
        user = get_user_model().objects.get(username=username)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        tab = context.new_page()
        sign_in(tab, live_server.url, username)
        switch_to_german(tab)
        for name, url_name, path in PAGES:
            if not may(user, ACCESS[url_name][1]):
                continue
            response = tab.goto(live_server.url + path.format(request=demo_with_a_pending_request))
            tab.wait_for_load_state()
            assert response is not None and response.status == 200, f"{name} as {username}: {response}"
            text = tab.evaluate(VISIBLE_UI_TEXT)
            for written in people_wrote:
                text = text.replace(written, " ")
            hits = {p for p in phrases if _contains(text, p)}
            if hits:
                found[(name, path)] |= hits
                roles_of[(name, path)].append(username)
            tab.screenshot(path=str(SCREENSHOTS / f"german-{username}-{name}.png"), full_page=True)
        context.close()
    report = [
        f"{name} {path} (as {', '.join(roles_of[(name, path)])}): " + " | ".join(sorted(hits))
        for (name, path), hits in sorted(found.items())
    ]
    assert not report, f"{len(report)} page(s) show English UI strings in German:\n" + "\n".join(report)
