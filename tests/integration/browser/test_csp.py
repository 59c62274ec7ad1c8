"""The console under its Content-Security-Policy in real Chromium: no page, htmx swap or poll trips it.

The policy is the production one (settings apply it with DEBUG on too): scripts and styles only from our static
files, no inline code. Chromium reports every refused script, style or image both as a console error and as a
`securitypolicyviolation` event; the test collects both and expects none.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings

from tests.conftest import ROOT
from tests.integration.browser.conftest import sign_in

pytestmark = pytest.mark.django_db(transaction=True)

COLLECT_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}`);
});
"""


@pytest.fixture
def demo(demo_committed: None) -> None:
    pass
    from approvals.services import approval_evaluate

    approval_evaluate(
        tool_name="prescribeMedication",
        profile="clinical-production",
        dispatch_mode="supervised",
        run_id="csp-run",
        requested_by="dr.house",
        patient_ref="pat-1",
        args={"drug": "Amoxicillin", "dose": "500 mg"},
        idempotency_key="csp-run/1",
        via="test",
    )


class Watch:
    """Everything the page said about the CSP, from the console and from violation events."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[str] = []
        page.add_init_script(COLLECT_VIOLATIONS)
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))

    def violations(self) -> list[str]:
        events = self.page.evaluate("window.__cspViolations || []")
        said = [m for m in self.console if "Content Security Policy" in m or "Content-Security-Policy" in m]
        return said + events


def test_the_policy_forbids_inline_scripts_and_styles(client: Any, db: Any) -> None:
    policy = client.get("/login/")["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert "unsafe" not in policy and directives["frame-ancestors"] == "'none'"
    assert settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["script-src"] == ["'self'"]


def test_templates_have_no_inline_scripts_handlers_or_styles() -> None:
    """The policy refuses them; catching them here names the template, not just the page that broke."""
    # (a JSON data block, <script type="application/json">, is not code: the policy lets it be)
    inline = re.compile(
        r'<script(?![^>]*\s(?:src=|type="application/json"))[^>]*>|\son[a-z]+\s*=|\sstyle\s*=|<style[\s>]',
        re.IGNORECASE,
    )
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if inline.search(re.sub(r"{#.*?#}", "", line))
    ]
    assert found == []


def test_dashboard_catalog_and_queue_run_under_the_policy(
    live_server: Any, demo: None, page: Any, screenshot: Any
) -> None:
    watch = Watch(page)
    sign_in(page, live_server.url, "approver", "/")
    assert page.locator("h1").inner_text() == "Dashboard"
    screenshot("csp-dashboard")

    page.click("nav >> text=Catalog")
    page.select_option("#id_system", "condor")  # htmx swaps the table in place and pushes the URL
    page.wait_for_url("**system=condor**")
    page.select_option("#id_mutating", "yes")
    page.wait_for_url("**mutating=yes**")
    page.locator("#catalog-table tbody tr").first.wait_for()
    assert "prescribeMedication" in page.locator("#catalog-table").inner_text()
    screenshot("csp-catalog-filtered")

    page.goto(live_server.url + "/approvals/")
    page.locator("[data-request-row]").first.wait_for()
    assert "prescribeMedication" in page.locator("#queue").inner_text()
    page.wait_for_timeout(3500)  # one htmx poll of the queue (every 3 s) and the header counts
    screenshot("csp-approvals-queue")
    assert watch.violations() == []

    # The watch itself works: an inline style attribute is refused and reported.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p style=\"color: red\">x</p>')")
    page.wait_for_timeout(200)
    assert any("style-src" in v for v in watch.violations())


def test_api_docs_and_admin_run_under_the_policy(live_server: Any, demo: None, page: Any, screenshot: Any) -> None:
    watch = Watch(page)
    sign_in(page, live_server.url, "admin", "/admin/")
    page.locator("#content").wait_for()
    page.goto(live_server.url + "/admin/catalog/tool/")
    page.locator("#result_list").wait_for()
    screenshot("csp-admin-tools")

    page.goto(live_server.url + "/api/v1/docs")
    page.locator(".swagger-ui .info .title").wait_for()  # Swagger UI rendered from our static files
    assert "Condor Admin API" in page.locator(".swagger-ui .info .title").inner_text()
    page.locator(".opblock").first.wait_for()
    page.locator(".opblock-summary").first.click()  # expand an operation: its parameters and responses
    page.locator(".opblock-body").first.wait_for()
    page.click("button.authorize")  # the bearer-token dialog
    page.locator(".dialog-ux").wait_for()
    screenshot("csp-api-docs")
    assert watch.violations() == []
