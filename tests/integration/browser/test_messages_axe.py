"""The page a form post lands on shows its Django messages ("Token … revoked") in a way axe-core accepts: the
status region wraps the list, it is not an item of it (an `<li role="status">` is no list item)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from catalog.models import ApiToken
from tests.integration.browser.conftest import sign_in
from tests.integration.browser.test_every_page import AXE_RUN, axe_script

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["axe_script"]  # the fixture, used by name below


@pytest.fixture
def a_token_to_revoke(transactional_db: Any) -> None:
    user = get_user_model().objects.create_user("catalog-admin", password="condor-demo")
    user.groups.set([Group.objects.get_or_create(name="catalog-admin")[0]])
    raw = ApiToken.generate()
    ApiToken.objects.create(name="old-ci", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=["catalog:read"])


def test_the_page_after_a_form_post_shows_its_message_and_passes_axe(
    live_server: Any, a_token_to_revoke: None, axe_script: str, browser: Any
) -> None:
    # axe is injected as an inline script, which our CSP refuses: this context alone bypasses it.
    context = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    try:
        page = context.new_page()
        sign_in(page, live_server.url, "catalog-admin", then="/tokens/")
        row = page.locator("tr[data-token=old-ci]")
        row.locator("summary", has_text="Revoke…").click()
        row.locator("button", has_text="Revoke “old-ci”").click()
        page.wait_for_load_state()
        status = page.get_by_role("status")
        assert "Token “old-ci” revoked" in status.inner_text()
        assert page.locator(".messages li").count() == 1
        page.add_script_tag(path=axe_script)
        assert page.evaluate(AXE_RUN) == []
    finally:
        context.close()
