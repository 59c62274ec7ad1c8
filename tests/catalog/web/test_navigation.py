"""The header offers each person the pages they may open, marks the one they are on, and never a forbidden one."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def header_links(client: Client, path: str = "/") -> dict[str, bool]:
    body = client.get(path).content.decode()
    header = body[body.index("<header>") : body.index("</header>")]
    return {m.group(1): bool(m.group(2)) for m in re.finditer(r'<a href="([^"]+)"( aria-current="page")?', header)}


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_on_call_engineer_sees_no_link_to_pages_for_others(make_user: Any) -> None:
    links = header_links(signed_in(make_user("otto", "on-call")))
    assert {"/", "/catalog/", "/owners/", "/teams/", "/findings/", "/usage/unknown/"} <= set(links)
    assert "/floors/" not in links and "/tokens/" not in links and "/admin/" not in links


def test_a_safety_officer_finds_the_tier_floors_and_a_catalog_admin_the_tokens(make_user: Any) -> None:
    assert "/floors/" in header_links(signed_in(make_user("sofia", "safety-officer")))
    assert "/tokens/" in header_links(signed_in(make_user("cara", "catalog-admin")))


def test_the_page_one_is_on_is_marked_also_below_more(make_user: Any) -> None:
    client = signed_in(make_user("otto", "on-call"))
    assert header_links(client, "/findings/")["/findings/"] is True
    assert header_links(client, "/findings/")["/"] is False
    body = client.get("/usage/unknown/").content.decode()
    assert '<details class="more" data-current>' in body


def test_every_linked_page_opens_for_that_person(make_user: Any) -> None:
    for username, group in (("otto", "on-call"), ("sofia", "safety-officer"), ("cara", "catalog-admin")):
        client = signed_in(make_user(username, group))
        for url in header_links(client):
            if url.startswith("/api/"):
                continue
            assert client.get(url).status_code == 200, (username, url)
